// SPDX-License-Identifier: Apache-2.0
// The policy's `allowed_http`: which HTTPS requests the egress proxy lets
// through, one entry "METHOD https://host[:port]/path-glob" each, or
// "GET wss://host[:port]/path-glob" for a WebSocket upgrade. The host is
// a name as allowed_hosts writes them (a leading "*." is one label or more
// below), the port 443 unless written; in the path glob a `*` at the very end
// matches the rest of the path (`/` included), a `*` elsewhere any run of
// characters within one segment. A request is matched on its path without
// the query. docs/policy.md, "Request rules".
#pragma once

#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::policy {

// What the proxy decided about one request, and the rule that decided it, as
// the trail words it: `allowed_http[1] "GET https://example.org/*"` or
// `not in allowed_http`; allowed_here lists the entries naming that host, for
// the 403's body (an agent reads it to know what it may do instead).
struct HttpDecision {
    bool allowed = false;
    std::string rule;
    std::vector<std::string> allowed_here;
};

// The decision for method on host:port (a name as TLS or Host carries it:
// any case, maybe a trailing dot) and path (the request target's path, query
// cut off) under the policy's allowed_http. websocket: the request asks for a
// WebSocket upgrade, which only a wss entry allows (and a wss entry nothing else).
HttpDecision decide_http(const std::vector<HttpRule>& rules, const std::string& method, const std::string& host,
                         uint16_t port, const std::string& path, bool websocket);

// A request as the trail's http record names it, method and URL:
// "GET https://host[:port]/path", "GET wss://..." for a WebSocket upgrade.
struct HttpRequest {
    std::string method;
    bool websocket = false;
    std::string origin; // "https://host[:port]": what the URL holds before the path
    std::string host;
    uint16_t port = 443;
    std::string path;
};
std::optional<HttpRequest> parse_http_request(const std::string& text); // nullopt: not one

// One entry, checked as create checks it (throws Error naming field).
HttpRule parse_http_rule(const std::string& entry, const std::string& field);

// Whether any entry names host:port: the names the proxy lets a TLS
// ClientHello carry.
bool http_host_allowed(const std::vector<HttpRule>& rules, const std::string& host, uint16_t port);

// Whether path matches the glob (above).
bool path_glob_matches(const std::string& glob, const std::string& path);

// Whether every path glob matches, wide matches too.
bool path_glob_covers(const std::string& wide, const std::string& glob);

// The rule list's parts (rule_lists.cpp). check_http_within: allowed_http
// needs allowed_hosts (else the network is open and requests go around the
// proxy), and no allowed_hosts name may also admit an allowed_http host on
// its port (a direct path around the request rules).
void parse_http_rules(const nlohmann::json& value, const std::string& field, Policy& policy);
nlohmann::ordered_json write_http_rules(const Policy& policy);
void check_http_within(const Policy& policy);
// --lock-policy: each entry covered by one of the default's (same method,
// scheme and port, a name the default's covers, a path glob within its glob); absent, the default's.
void check_http_narrowed(const Policy& locked_default, const Policy& annotation);
void combine_http_rules(const Policy& locked_default, const Policy& annotation, Policy& narrowed);

} // namespace cerberus::policy
