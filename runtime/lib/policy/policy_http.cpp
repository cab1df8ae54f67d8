// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_http.hpp"

#include "base/error.hpp"
#include "base/numbers.hpp"
#include "policy/policy_json.hpp"

#include <algorithm>
#include <cctype>

namespace cerberus::policy {

namespace {

constexpr std::string_view https_scheme = "https://";
constexpr std::string_view wss_scheme = "wss://";

void check_method(const std::string& method, const std::string& field, const std::string& entry)
{
    bool token = !method.empty() && method.size() <= 20 &&
                 std::all_of(method.begin(), method.end(), [](unsigned char c) { return c >= 'A' && c <= 'Z'; });
    if (!token)
        invalid(field, "the method must be upper-case letters (\"GET\") in " + json_quoted(entry));
}

// A host name (no address: TLS to one carries no name to check) and one port, 443 unless written.
void parse_host(const std::string& host, const std::string& field, const std::string& entry, HttpRule& rule)
{
    if (host.find_first_of("@[") != std::string::npos)
        invalid(field, "the host must be a name, without user or address, in " + json_quoted(entry));
    HostRule parsed = parse_host_rule(host, field);
    if (parsed.network)
        invalid(field, "the host must be a name, not an address (TLS to an address names no host), in " +
                           json_quoted(entry));
    if (parsed.ports.first != parsed.ports.last && !(parsed.ports == PortRange{}))
        invalid(field, "one port, not a range, in " + json_quoted(entry));
    rule.host_name = parsed.host_name;
    if (!(parsed.ports == PortRange{}))
        rule.port = parsed.ports.first;
}

// Printable, no query, fragment or percent-encoding (the proxy matches the
// path as decoded, so a rule says it once), no "." or ".." nor empty segment.
void check_path(const std::string& path, const std::string& field, const std::string& entry)
{
    for (unsigned char c : path)
        if (c <= 0x20 || c >= 0x7f || c == '?' || c == '#' || c == '%' || c == '\\')
            invalid(field, "the path may not hold spaces, controls, \"?\", \"#\", \"%\" or \"\\\" in " +
                               json_quoted(entry));
    for (size_t start = 1; start <= path.size();) {
        size_t end = std::min(path.find('/', start), path.size());
        std::string_view segment = std::string_view(path).substr(start, end - start);
        if (segment == "." || segment == "..")
            invalid(field, "the path has a \"" + std::string(segment) + "\" segment in " + json_quoted(entry));
        if (segment.empty() && end < path.size())
            invalid(field, "the path has an empty segment (\"//\") in " + json_quoted(entry));
        start = end + 1;
    }
}

// Whether segment (no "/") matches pattern, where `*` is any run: greedy,
// going back only to the last `*`, so linear in each for a given number of
// stars, never exponential in them (the agent chooses the path).
bool segment_matches(std::string_view pattern, std::string_view segment)
{
    size_t p = 0, s = 0, star = std::string_view::npos, resume = 0;
    while (s < segment.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            resume = s;
        } else if (p < pattern.size() && pattern[p] == segment[s]) {
            ++p;
            ++s;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            s = ++resume;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

std::vector<std::string_view> segments_of(std::string_view path)
{
    std::vector<std::string_view> segments;
    for (size_t start = 0;;) {
        size_t slash = path.find('/', start);
        segments.push_back(path.substr(start, slash == std::string_view::npos ? path.npos : slash - start));
        if (slash == std::string_view::npos)
            return segments;
        start = slash + 1;
    }
}

// Segment by segment, since an inner `*` never crosses "/"; a final `*`
// ends the last glob segment's match within its path segment and takes
// whatever segments follow.
bool glob_match(std::string_view glob, std::string_view path)
{
    auto globs = segments_of(glob);
    auto paths = segments_of(path);
    bool rest = glob.ends_with('*');
    if (paths.size() < globs.size() || (!rest && paths.size() != globs.size()))
        return false;
    for (size_t i = 0; i < globs.size(); ++i)
        if (!segment_matches(globs[i], paths[i]))
            return false;
    return true;
}

bool names_overlap(const std::string& a, const std::string& b)
{
    return host_pattern_covers(a, b) || host_pattern_covers(b, a);
}

} // namespace

HttpRule parse_http_rule(const std::string& entry, const std::string& field)
{
    HttpRule rule{.text = entry};
    size_t space = entry.find(' ');
    if (space == std::string::npos || entry.find(' ', space + 1) != std::string::npos)
        invalid(field, "expected \"METHOD https://host/path\", got " + json_quoted(entry));
    rule.method = entry.substr(0, space);
    check_method(rule.method, field, entry);
    std::string url = entry.substr(space + 1);
    rule.websocket = url.starts_with(wss_scheme);
    if (!rule.websocket && !url.starts_with(https_scheme))
        invalid(field, "only https:// requests and wss:// upgrades are proxied, in " + json_quoted(entry));
    if (rule.websocket && rule.method != "GET")
        invalid(field, "a WebSocket upgrade is a GET: wss:// takes only GET, in " + json_quoted(entry));
    size_t host_start = (rule.websocket ? wss_scheme : https_scheme).size();
    size_t slash = url.find('/', host_start);
    if (slash == std::string::npos)
        invalid(field, "expected a path after the host (\"/\", \"/*\") in " + json_quoted(entry));
    parse_host(url.substr(host_start, slash - host_start), field, entry, rule);
    rule.path = url.substr(slash);
    check_path(rule.path, field, entry);
    return rule;
}

std::optional<HttpRequest> parse_http_request(const std::string& text)
{
    HttpRequest request;
    size_t space = text.find(' ');
    if (space == std::string::npos)
        return std::nullopt;
    request.method = text.substr(0, space);
    std::string_view url = std::string_view(text).substr(space + 1);
    request.websocket = url.starts_with(wss_scheme);
    if (!request.websocket && !url.starts_with(https_scheme))
        return std::nullopt;
    size_t host_start = (request.websocket ? wss_scheme : https_scheme).size();
    size_t slash = url.find('/', host_start);
    if (slash == std::string_view::npos || slash == host_start)
        return std::nullopt;
    request.origin = std::string(url.substr(0, slash));
    request.host = std::string(url.substr(host_start, slash - host_start));
    if (size_t colon = request.host.rfind(':'); colon != std::string::npos) {
        auto port = parse_number(std::string_view(request.host).substr(colon + 1), 65535);
        if (!port || *port == 0)
            return std::nullopt;
        request.port = static_cast<uint16_t>(*port);
        request.host.erase(colon);
    }
    request.path = std::string(url.substr(slash));
    return request;
}

bool path_glob_matches(const std::string& glob, const std::string& path)
{
    return glob_match(glob, path);
}

// The narrower glob read as a path: each of its inner `*` is a character
// within a segment, which only a wide `*` matches; its final `*` (any rest)
// only a wide final `*` covers.
bool path_glob_covers(const std::string& wide, const std::string& glob)
{
    if (glob.ends_with('*') && !wide.ends_with('*'))
        return false;
    return glob_match(wide, glob);
}

HttpDecision decide_http(const std::vector<HttpRule>& rules, const std::string& method, const std::string& host,
                         uint16_t port, const std::string& path, bool websocket)
{
    HttpDecision decision{.rule = "not in allowed_http"};
    for (size_t i = 0; i < rules.size(); ++i) {
        const HttpRule& rule = rules[i];
        if (rule.port != port || !host_name_matches(rule.host_name, host))
            continue;
        decision.allowed_here.push_back(rule.text);
        if (!decision.allowed && rule.websocket == websocket && rule.method == method &&
            path_glob_matches(rule.path, path)) {
            decision.allowed = true;
            decision.rule = entry_field("allowed_http", i) + " " + json_quoted(rule.text);
        }
    }
    return decision;
}

bool http_host_allowed(const std::vector<HttpRule>& rules, const std::string& host, uint16_t port)
{
    return std::any_of(rules.begin(), rules.end(), [&](const HttpRule& rule) {
        return rule.port == port && host_name_matches(rule.host_name, host);
    });
}

void parse_http_rules(const nlohmann::json& value, const std::string& field, Policy& policy)
{
    auto entries = string_list(value, field);
    policy.allowed_http.clear();
    for (size_t i = 0; i < entries.size(); ++i)
        policy.allowed_http.push_back(parse_http_rule(entries[i], entry_field(field, i)));
}

nlohmann::ordered_json write_http_rules(const Policy& policy)
{
    auto entries = nlohmann::ordered_json::array();
    for (const auto& rule : policy.allowed_http)
        entries.push_back(rule.text);
    return entries;
}

void check_http_within(const Policy& policy)
{
    if (policy.allowed_http.empty())
        return;
    if (!policy.allowed_hosts)
        invalid("policy.allowed_http", "needs allowed_hosts: with the network open, requests could go around the proxy");
    for (size_t i = 0; i < policy.allowed_http.size(); ++i) {
        const HttpRule& rule = policy.allowed_http[i];
        for (size_t j = 0; j < policy.allowed_hosts->size(); ++j) {
            const HostRule& host = (*policy.allowed_hosts)[j];
            if (!host.network && host.ports.first <= rule.port && rule.port <= host.ports.last &&
                names_overlap(host.host_name, rule.host_name))
                invalid(entry_field("policy.allowed_http", i),
                        json_quoted(rule.host_name) + " is also admitted by policy.allowed_hosts[" +
                            std::to_string(j) + "] " + json_quoted(host.text) + " on port " +
                            std::to_string(rule.port) + ", a way around the request rules");
        }
    }
}

void check_http_narrowed(const Policy& base, const Policy& annotation)
{
    for (size_t i = 0; i < annotation.allowed_http.size(); ++i) {
        const HttpRule& rule = annotation.allowed_http[i];
        bool covered = std::any_of(base.allowed_http.begin(), base.allowed_http.end(), [&](const HttpRule& wide) {
            return wide.method == rule.method && wide.websocket == rule.websocket && wide.port == rule.port &&
                   host_pattern_covers(wide.host_name, rule.host_name) && path_glob_covers(wide.path, rule.path);
        });
        if (!covered)
            throw Error(entry_field("policy.allowed_http", i) + ": " + json_quoted(rule.text) +
                            " widens the locked default policy",
                        EPERM);
    }
}

void combine_http_rules(const Policy& base, const Policy& annotation, Policy& narrowed)
{
    narrowed.allowed_http = annotation.allowed_http.empty() ? base.allowed_http : annotation.allowed_http;
}

} // namespace cerberus::policy
