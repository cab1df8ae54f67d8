// SPDX-License-Identifier: Apache-2.0
// The egress proxy's part for one container: the agent's TLS connections to
// hosts named in allowed_http, steered to it, are terminated with a
// certificate from the container's CA when the name in the ClientHello is one
// the policy allows and the DNS gate admitted for the address dialled; each
// request (HTTP/1.1, or an HTTP/2 stream: h2_session.hpp) is then decided by
// allowed_http (request_judge.hpp) and, when allowed, sent on as HTTP/1.1
// over the proxy's own verified TLS connection to that address (an allowed
// WebSocket upgrade's frames then relayed unread, tunnel.hpp). In audit mode a
// request the rules refuse is sent on as well, and recorded so. The host
// (the DNS gate's daemon) accepts the connections and runs serve() on a thread
// per connection. docs/policy.md, "Request rules".
#pragma once

#include "base/fd.hpp"
#include "egress/certificate_authority.hpp"
#include "egress/egress_config.hpp"
#include "egress/tls_handles.hpp"
#include "policy/policy.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cerberus::egress {

// Where the agent connected (the original destination of a steered connection).
struct Endpoint {
    int family = 0; // AF_INET: the first 4 bytes of addr
    std::array<uint8_t, 16> addr{};
    uint16_t port = 0;
};

// One decision of the proxy, for the container's trail: a refused TLS
// handshake (kind "tls") or a request, allowed or not (kind "http").
struct HttpRecord {
    std::string kind; // "tls" or "http"
    bool allowed = false; // allowed_http allows it (a failure upstream answers an allowed request)
    bool audited = false; // refused by allowed_http alone, sent on in audit mode: the trail's verdict "audit"
    std::string server_name; // the ClientHello's, "" when it carried none
    std::string method; // "" for tls
    std::string url; // "https://host[:port]/path" ("wss://" for a WebSocket upgrade), the query left out; "" for tls
    std::string rule; // HttpDecision::rule: `allowed_http[1] "GET https://..."` or `not in allowed_http`
    std::string reason; // why, in words, for refusals and failures; "" for an allowed request
    int status = 0; // the status the agent got; 0 for tls
    std::string credential; // the host configuration's credential the proxy set on the request; "" for none
};

// What the proxy knows of a container, fixed while it lives.
struct ContainerContext {
    std::string id;
    uint64_t cgroup_id = 0;
    std::vector<policy::HttpRule> rules;
    std::shared_ptr<const CertificateAuthority> ca;
    std::string upstream_trust; // CA file the upstream servers are verified against; "": the system's
    std::vector<Credential> credentials; // set on the requests to their hosts, scrubbed from the responses
    // The policy's mode is audit: a request the rules refuse goes on, recorded as enforce mode would have
    // refused it (the TLS server name and the request's form are checked as in enforce mode).
    bool audit = false;
};

// One accepted connection, and the host's part in serving it.
struct Connection {
    Endpoint original;
    // Whether the DNS gate admitted server_name for original's address.
    std::function<bool(const std::string& server_name)> admitted;
    // A blocking TCP socket connected to original (made in the container's
    // network namespace); throws Error when it cannot be.
    std::function<UniqueFd()> connect_upstream;
    // Called for each request decided and each refused handshake.
    std::function<void(const HttpRecord&)> record;
};

class Proxy {
public:
    // Builds the TLS contexts once (throws Error when upstream_trust cannot be read).
    explicit Proxy(ContainerContext context);

    // Serves one client connection to its end: blocking, on the caller's
    // thread, safe to run on several threads at once. Never throws.
    void serve(UniqueFd client, const Connection& connection) const noexcept;

    const ContainerContext& context() const { return context_; }

private:
    ContainerContext context_;
    SslCtxPtr server_tls_; // the agent's side: the leaf picked by server name, h2 or http/1.1
    SslCtxPtr upstream_tls_; // the proxy's own connections: verified, http/1.1
};

} // namespace cerberus::egress
