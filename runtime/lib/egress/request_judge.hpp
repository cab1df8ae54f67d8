// SPDX-License-Identifier: Apache-2.0
// What the egress proxy does with a request whatever framed it (HTTP/1.1 in
// egress_proxy.cpp, HTTP/2 in h2_session.cpp): the checks of its form, the
// allowed_http decision (audit mode included), the proxy's own answers (the
// 403 naming the rule and what is allowed), the trail's http record, the
// host's credential set on the request, and the scrub of the response.
#pragma once

#include "egress/egress_proxy.hpp"
#include "egress/secret_scrub.hpp"
#include "egress/tls_stream.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace cerberus::egress {

namespace http = boost::beast::http;

// A request as the rules see it, read from either framing.
struct RequestHead {
    std::string method;
    std::string path; // the target without its query
    std::optional<std::string> host; // the Host header (HTTP/1.1) or :authority (HTTP/2)
    bool websocket = false; // an HTTP/1.1 WebSocket upgrade: decided by wss:// entries
    bool other_upgrade = false; // an Upgrade header that is not WebSocket's (h2c)
};

// A decision on a request: what the proxy answers itself (a refusal or a
// failure upstream), or how a request sent on was decided.
struct Answer {
    http::status status;
    bool allowed = false; // what allowed_http said: a failure upstream answers an allowed request
    bool audited = false; // refused by allowed_http, sent on in audit mode
    std::string rule;
    std::string reason; // for the record
    std::string body; // for the agent

    // Whether the request goes on upstream (allowed, or audited in audit mode).
    bool passes() const { return allowed || audited; }
};

// One agent connection's judge: its admitted server name and the credential for it.
class Judge {
public:
    Judge(const ContainerContext& context, const Connection& connection, SSL_CTX* upstream_tls, std::string host);

    const std::string& host() const { return host_; }
    // "https://host[:port]/path" ("wss://" for a WebSocket upgrade).
    std::string url(const std::string& path, bool websocket = false) const;

    // Why the request may not pass whatever the rules say (and whatever the mode): its form.
    std::optional<Answer> refusal(const RequestHead& request) const;
    // Why a Host (or :authority) may not pass: it must name the TLS server name and the port dialled.
    std::optional<Answer> refusal_by_host(const std::string& host_header) const;
    // The rules' decision; a refusal (403 naming the rule and what is allowed) unless it passes().
    Answer decide(const RequestHead& request) const;
    // The trail's http record. decided: the rules' decision and the reason of a refusal or failure.
    void record(const RequestHead& request, int status, const Answer& decided) const;
    // A 502 saying why the exchange with the server broke, under the rules' decision (decided).
    static Answer bad_gateway(const Answer& decided, const std::string& why);

    // The proxy's own verified TLS connection to the server, made in upstream; when it cannot be, a 502 under
    // the rules' decision (decided).
    std::optional<Answer> open_upstream(std::optional<TlsStream>& upstream, const Answer& decided) const;
    // The host's credential in place of whatever the agent sent under its header (its placeholder), and a
    // body the scrub can read.
    void set_credential(http::fields& request) const;
    // A response to a request that carried the credential whose body the scrub cannot read (compressed
    // although the proxy asked for none): refused with a 502 under the rules' decision (decided). has_body: false
    // for HEAD's, a 204 or 304, Content-Length 0.
    std::optional<Answer> unscrubbable(boost::beast::string_view content_encoding, bool has_body,
                                       const Answer& decided) const;
    // Each header field with the credential's secret masked (fields of one name kept in their order).
    void scrub_header(http::fields& response) const;
    // The scrub a response body passes through, when the host has a credential.
    std::optional<SecretScrub> body_scrub() const;

private:
    const ContainerContext& context_;
    const Connection& connection_;
    SSL_CTX* upstream_tls_;
    std::string host_;
    const Credential* credential_; // the host configuration's for host_, if any
};

// Whether a connection upstream left idle may take another request: the server has sent nothing since its last
// response (neither a close nor bytes no request asked for; read_ahead: what the parser read past it). A
// server that closed an idle connection would otherwise fail the next request with a 502.
bool reusable(const TlsStream& upstream, const boost::beast::flat_buffer& read_ahead);

// An idle agent or a silent server frees its thread after this long.
inline constexpr int idle_seconds = 300;
// Gives a socket that timeout on reads and writes.
void set_idle_timeout(int fd);

} // namespace cerberus::egress
