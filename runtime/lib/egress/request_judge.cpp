// SPDX-License-Identifier: Apache-2.0
#include "egress/request_judge.hpp"

#include "base/text.hpp"
#include "egress/egress_tls.hpp"
#include "policy/policy_http.hpp"

#include <sys/socket.h>
#include <sys/time.h>

#include <utility>
#include <vector>

namespace cerberus::egress {
namespace {

// A path with a "." or ".." segment, plain or percent-encoded: the server would
// resolve it to a path other than the one the rules were matched against.
bool has_dot_segment(const std::string& path)
{
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = std::min(path.find('/', start), path.size());
        std::string segment = ascii_lower(path.substr(start, end - start));
        for (const char* dots : {".", "..", "%2e", "%2e%2e", ".%2e", "%2e."})
            if (segment == dots)
                return true;
        start = end + 1;
    }
    return false;
}

// The proxy's answer to a request it sent on (a failure upstream): a 502, the rules' decision kept for the record.
Answer failed_upstream(const Answer& decided, const std::string& why, std::string body)
{
    return Answer{http::status::bad_gateway, decided.allowed, decided.audited, decided.rule, why, std::move(body)};
}

} // namespace

bool reusable(const TlsStream& upstream, const boost::beast::flat_buffer& read_ahead)
{
    return read_ahead.size() == 0 && !upstream.has_input();
}

void set_idle_timeout(int fd)
{
    timeval limit{idle_seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

Judge::Judge(const ContainerContext& context, const Connection& connection, SSL_CTX* upstream_tls, std::string host)
    : context_(context), connection_(connection), upstream_tls_(upstream_tls), host_(std::move(host)),
      credential_(credential_for_host(context.credentials, host_))
{
}

std::string Judge::url(const std::string& path, bool websocket) const
{
    uint16_t port = connection_.original.port;
    return (websocket ? "wss://" : "https://") + host_ + (port == 443 ? "" : ":" + std::to_string(port)) + path;
}

void Judge::record(const RequestHead& request, int status, const Answer& decided) const
{
    HttpRecord record;
    record.kind = "http";
    record.allowed = decided.allowed;
    record.audited = decided.audited;
    record.server_name = host_;
    record.method = request.method;
    record.url = url(request.path, request.websocket);
    record.rule = decided.rule;
    record.reason = decided.reason;
    record.status = status;
    if (decided.passes() && credential_ && !request.websocket) // those set_credential saw
        record.credential = credential_->name;
    connection_.record(record);
}

Answer Judge::bad_gateway(const Answer& decided, const std::string& why)
{
    return failed_upstream(decided, why, "The egress proxy: " + why + ".\n");
}

// Else the request is for another site behind the same front.
std::optional<Answer> Judge::refusal_by_host(const std::string& host_header) const
{
    std::string name = host_header;
    std::string port;
    if (size_t colon = name.rfind(':'); colon != std::string::npos && name.find(']') == std::string::npos) {
        port = name.substr(colon + 1);
        name.erase(colon);
    }
    if (canonical_host_name(name) == host_ && (port.empty() || port == std::to_string(connection_.original.port)))
        return std::nullopt;
    std::string reason = "the Host header names " + host_header + ", the TLS server name was " + host_ +
                         " (domain fronting?)";
    return Answer{http::status::forbidden, false, false, "", reason,
                  "Refused by the egress proxy: " + reason + ". Send requests for " + host_ +
                      " on a connection to " + host_ + ".\n"};
}

std::optional<Answer> Judge::refusal(const RequestHead& request) const
{
    const std::string& path = request.path;
    if (path.empty() || path.front() != '/')
        return Answer{http::status::bad_request, false, false, "", "the request target is not a path",
                      "The egress proxy takes requests for a path (\"GET /x HTTP/1.1\").\n"};
    if (has_dot_segment(path))
        return Answer{http::status::bad_request, false, false, "", "the path has a \".\" or \"..\" segment",
                      "The egress proxy refuses paths with \".\" or \"..\" segments: write the path they lead to.\n"};
    if (!request.host)
        return Answer{http::status::bad_request, false, false, "", "no Host header",
                      "The request has no Host header.\n"};
    if (auto refused = refusal_by_host(*request.host))
        return refused;
    if (request.other_upgrade)
        return Answer{http::status::not_implemented, false, false, "", "a protocol upgrade other than WebSocket (h2c)",
                      "The egress proxy carries no protocol upgrade but WebSocket's (a GET with \"Upgrade: "
                      "websocket\", allowed by a wss:// entry).\n"};
    return std::nullopt;
}

Answer Judge::decide(const RequestHead& request) const
{
    auto decision = policy::decide_http(context_.rules, request.method, host_, connection_.original.port, request.path,
                                        request.websocket);
    if (decision.allowed || context_.audit)
        return Answer{http::status::ok, decision.allowed, !decision.allowed, decision.rule, "", ""};
    std::string body = "Refused by the container's egress policy: " + request.method + " " +
                       url(request.path, request.websocket) + " is " + decision.rule + ".\nAllowed for " + host_ +
                       ":\n";
    for (const auto& entry : decision.allowed_here)
        body += "  " + entry + "\n";
    return Answer{http::status::forbidden, false, false, decision.rule, "", body};
}

std::optional<Answer> Judge::open_upstream(std::optional<TlsStream>& upstream, const Answer& decided) const
{
    std::string why;
    try {
        UniqueFd fd = connection_.connect_upstream();
        set_idle_timeout(fd.get());
        upstream.emplace(upstream_tls_, std::move(fd));
        if (connect_verified(*upstream, host_, why))
            return std::nullopt;
    } catch (const std::exception& e) {
        why = std::string("cannot connect to the server: ") + e.what();
    }
    upstream.reset();
    return failed_upstream(decided, why, "The egress proxy could not reach " + host_ + ": " + why + ".\n");
}

void Judge::set_credential(http::fields& request) const
{
    if (!credential_)
        return;
    request.set(credential_->header, credential_->value);
    request.set(http::field::accept_encoding, "identity");
}

std::optional<Answer> Judge::unscrubbable(boost::beast::string_view content_encoding, bool has_body,
                                         const Answer& decided) const
{
    if (!credential_ || !has_body || content_encoding.empty() || boost::beast::iequals(content_encoding, "identity"))
        return std::nullopt;
    std::string why = "the server sent a body encoded as " + std::string(content_encoding) +
                      " to a request carrying the credential " + credential_->name +
                      ": the proxy cannot check it for the secret";
    return failed_upstream(decided, why, "The egress proxy refused the response: " + why + ".\n");
}

void Judge::scrub_header(http::fields& response) const
{
    if (!credential_)
        return;
    SecretScrub scrub(credential_->secret);
    std::vector<std::pair<std::string, std::string>> fields;
    bool found = false;
    for (const auto& field : response) {
        fields.emplace_back(field.name_string(), scrub.scrubbed(std::string(field.value())));
        found = found || fields.back().second != field.value();
    }
    if (!found)
        return;
    for (const auto& [name, _] : fields)
        response.erase(name);
    for (const auto& [name, value] : fields)
        response.insert(name, value);
}

std::optional<SecretScrub> Judge::body_scrub() const
{
    if (!credential_)
        return std::nullopt;
    return SecretScrub(credential_->secret);
}

} // namespace cerberus::egress
