// SPDX-License-Identifier: Apache-2.0
#include "egress/egress_proxy.hpp"

#include "base/error.hpp"
#include "egress/egress_tls.hpp"
#include "egress/http_relay.hpp"
#include "egress/secret_scrub.hpp"
#include "egress/tunnel.hpp"
#include "policy/policy_http.hpp"

#include <boost/beast/websocket/rfc6455.hpp>
#include <spdlog/spdlog.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <limits>
#include <optional>

namespace cerberus::egress {
namespace {

// An idle agent or a silent server frees its thread after this long.
constexpr time_t idle_seconds = 300;
constexpr uint32_t header_limit = 64 * 1024;
// Bodies are streamed, never held: no limit. (Not boost::none: Beast 1.74
// compares a Content-Length with an empty limit as larger.)
constexpr uint64_t no_body_limit = std::numeric_limits<uint64_t>::max();

using RequestParser = http::request_parser<http::buffer_body>;
using ResponseParser = http::response_parser<http::buffer_body>;

void set_idle_timeout(int fd)
{
    timeval limit{idle_seconds, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

// What the proxy answers itself (a refusal or a failure upstream), and records.
struct Answer {
    http::status status;
    bool allowed = false; // what allowed_http said: a failure upstream answers an allowed request
    bool audited = false; // refused by allowed_http, sent on in audit mode (a failure upstream)
    std::string rule;
    std::string reason; // for the record
    std::string body; // for the agent
};

// A path with a "." or ".." segment, plain or percent-encoded: the server would
// resolve it to a path other than the one the rules were matched against.
bool has_dot_segment(const std::string& path)
{
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = std::min(path.find('/', start), path.size());
        std::string segment = path.substr(start, end - start);
        for (auto& c : segment)
            c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        for (const char* dots : {".", "..", "%2e", "%2e%2e", ".%2e", "%2e."})
            if (segment == dots)
                return true;
        start = end + 1;
    }
    return false;
}

// A WebSocket upgrade (a GET with "Connection: upgrade" and "Upgrade: websocket"): decided by wss:// entries.
bool is_websocket(const RequestParser& parser)
{
    return boost::beast::websocket::is_upgrade(parser.get());
}

std::string_view unread(const boost::beast::flat_buffer& buffer)
{
    return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

// One agent connection after its handshake: requests read, decided and sent on in turn.
class Session {
public:
    Session(const ContainerContext& context, const Connection& connection, SSL_CTX* upstream_tls, TlsStream& agent,
            std::string host)
        : context_(context), connection_(connection), upstream_tls_(upstream_tls), agent_(agent), host_(std::move(host)),
          credential_(credential_for_host(context.credentials, host_))
    {
    }

    // Serves requests until either side ends the connection.
    void run()
    {
        while (serve_one()) {
        }
    }

private:
    bool serve_one();
    std::optional<Answer> refusal(const RequestParser& parser, const std::string& path) const;
    std::optional<Answer> refusal_by_host(const std::string& host_header) const;
    Answer refusal_by_rules(const RequestParser& parser, const std::string& path,
                            const policy::HttpDecision& decision) const;
    std::optional<Answer> open_upstream();
    bool forward(RequestParser& parser, const std::string& path, const Answer& decided);
    bool forward_websocket(RequestParser& parser, const std::string& path, const Answer& decided);
    bool read_final_header(std::optional<ResponseParser>& response, bool head);
    void set_credential(http::request<http::buffer_body>& request) const;
    std::optional<Answer> unscrubbable(const ResponseParser& response) const;
    void scrub_header(http::response<http::buffer_body>& response) const;
    bool answer(const RequestParser& parser, const std::string& path, const Answer& answer);
    void record(const RequestParser& parser, const std::string& path, int status, const Answer& decided) const;
    // The proxy's answer to a request it sent on (a failure upstream), under the rules' decision.
    static Answer failure(const Answer& decided, http::status status, const std::string& why, std::string body);
    std::string url(const std::string& path, bool websocket = false) const;

    const ContainerContext& context_;
    const Connection& connection_;
    SSL_CTX* upstream_tls_;
    TlsStream& agent_;
    std::string host_;
    const Credential* credential_; // the host configuration's for host_, if any
    boost::beast::flat_buffer agent_buffer_;
    std::optional<TlsStream> upstream_;
    boost::beast::flat_buffer upstream_buffer_;
};

std::string Session::url(const std::string& path, bool websocket) const
{
    uint16_t port = connection_.original.port;
    return (websocket ? "wss://" : "https://") + host_ + (port == 443 ? "" : ":" + std::to_string(port)) + path;
}

// decided: the rules' decision (its rule, whether allowed or audited) and the reason of a refusal or failure.
void Session::record(const RequestParser& parser, const std::string& path, int status, const Answer& decided) const
{
    HttpRecord record;
    record.kind = "http";
    record.allowed = decided.allowed;
    record.audited = decided.audited;
    record.server_name = host_;
    record.method = std::string(parser.get().method_string());
    record.url = url(path, is_websocket(parser));
    record.rule = decided.rule;
    record.reason = decided.reason;
    record.status = status;
    if ((decided.allowed || decided.audited) && credential_ && !is_websocket(parser)) // those set_credential saw
        record.credential = credential_->name;
    connection_.record(record);
}

Answer Session::failure(const Answer& decided, http::status status, const std::string& why, std::string body)
{
    return Answer{status, decided.allowed, decided.audited, decided.rule, why, std::move(body)};
}

// Reads one request's header and either answers it or sends it on; whether
// the connection goes on to another request.
bool Session::serve_one()
{
    RequestParser parser;
    parser.header_limit(header_limit);
    parser.body_limit(no_body_limit);
    boost::system::error_code ec;
    http::read_header(agent_, agent_buffer_, parser, ec);
    if (ec == http::error::end_of_stream || ec == boost::asio::error::eof)
        return false;
    if (ec) {
        http::response<http::string_body> bad{http::status::bad_request, 11};
        bad.body() = "the egress proxy could not read the request: " + ec.message() + "\n";
        bad.keep_alive(false);
        bad.prepare_payload();
        http::write(agent_, bad, ec);
        return false;
    }
    std::string target(parser.get().target());
    std::string path = target.substr(0, target.find('?'));
    if (auto refused = refusal(parser, path))
        return answer(parser, path, *refused);
    auto decision = policy::decide_http(context_.rules, std::string(parser.get().method_string()), host_,
                                        connection_.original.port, path, is_websocket(parser));
    Answer decided{http::status::ok, decision.allowed, !decision.allowed && context_.audit, decision.rule, "", ""};
    if (!decided.allowed && !decided.audited)
        return answer(parser, path, refusal_by_rules(parser, path, decision));
    if (!upstream_)
        if (auto failed = open_upstream())
            return answer(parser, path, failure(decided, failed->status, failed->reason, failed->body));
    if (is_websocket(parser))
        return forward_websocket(parser, path, decided);
    return forward(parser, path, decided);
}

// Why the Host header may not pass: it must name the TLS server name (and
// the port dialled, when it names one), else the request is for another site
// behind the same front.
std::optional<Answer> Session::refusal_by_host(const std::string& host_header) const
{
    std::string name = host_header;
    std::string port;
    if (size_t colon = name.rfind(':'); colon != std::string::npos && name.find(']') == std::string::npos) {
        port = name.substr(colon + 1);
        name.erase(colon);
    }
    if (normalized_host(name) == host_ && (port.empty() || port == std::to_string(connection_.original.port)))
        return std::nullopt;
    std::string reason = "the Host header names " + host_header + ", the TLS server name was " + host_ +
                         " (domain fronting?)";
    return Answer{http::status::forbidden, false, false, "", reason,
                  "Refused by the egress proxy: " + reason + ". Send requests for " + host_ +
                      " on a connection to " + host_ + ".\n"};
}

// Why the request may not pass whatever the rules say (and whatever the mode): its form.
std::optional<Answer> Session::refusal(const RequestParser& parser, const std::string& path) const
{
    const auto& request = parser.get();
    if (path.empty() || path.front() != '/')
        return Answer{http::status::bad_request, false, false, "", "the request target is not a path",
                      "The egress proxy takes requests for a path (\"GET /x HTTP/1.1\").\n"};
    if (has_dot_segment(path))
        return Answer{http::status::bad_request, false, false, "", "the path has a \".\" or \"..\" segment",
                      "The egress proxy refuses paths with \".\" or \"..\" segments: write the path they lead to.\n"};
    if (request.find(http::field::host) == request.end())
        return Answer{http::status::bad_request, false, false, "", "no Host header",
                      "The request has no Host header.\n"};
    if (auto refused = refusal_by_host(std::string(request[http::field::host])))
        return refused;
    if (request.find(http::field::upgrade) != request.end() && !is_websocket(parser))
        return Answer{http::status::not_implemented, false, false, "", "a protocol upgrade other than WebSocket (h2c)",
                      "The egress proxy carries no protocol upgrade but WebSocket's (a GET with \"Upgrade: "
                      "websocket\", allowed by a wss:// entry).\n"};
    return std::nullopt;
}

// The 403 of a request allowed_http does not allow, naming the rule and the entries for the host.
Answer Session::refusal_by_rules(const RequestParser& parser, const std::string& path,
                                 const policy::HttpDecision& decision) const
{
    std::string body = "Refused by the container's egress policy: " + std::string(parser.get().method_string()) +
                       " " + url(path, is_websocket(parser)) + " is " + decision.rule + ".\nAllowed for " + host_ +
                       ":\n";
    for (const auto& entry : decision.allowed_here)
        body += "  " + entry + "\n";
    return Answer{http::status::forbidden, false, false, decision.rule, "", body};
}

std::optional<Answer> Session::open_upstream()
{
    std::string why;
    try {
        UniqueFd fd = connection_.connect_upstream();
        set_idle_timeout(fd.get());
        upstream_.emplace(upstream_tls_, std::move(fd));
        if (connect_verified(*upstream_, host_, why))
            return std::nullopt;
    } catch (const std::exception& e) {
        why = std::string("cannot connect to the server: ") + e.what();
    }
    upstream_.reset();
    return Answer{http::status::bad_gateway, true, false, "", why,
                  "The egress proxy could not reach " + host_ + ": " + why + ".\n"};
}

// Writes the proxy's own answer and records it; the connection goes on when
// the agent wants it to and no unread request body is left in the way.
bool Session::answer(const RequestParser& parser, const std::string& path, const Answer& answer)
{
    record(parser, path, static_cast<int>(answer.status), answer);
    http::response<http::string_body> response{answer.status, parser.get().version()};
    response.set(http::field::content_type, "text/plain; charset=utf-8");
    response.keep_alive(parser.get().keep_alive() && parser.is_done());
    response.body() = answer.body;
    response.prepare_payload();
    boost::system::error_code ec;
    http::write(agent_, response, ec);
    return !ec && response.keep_alive();
}

// Reads the header of the response to the request sent, passing interim ones
// (1xx: 102 Processing, 103 Early Hints, an unasked 100) on to the agent; whether it came.
bool Session::read_final_header(std::optional<ResponseParser>& response, bool head)
{
    while (true) {
        response.emplace();
        response->header_limit(header_limit);
        response->body_limit(no_body_limit);
        response->skip(head);
        boost::system::error_code ec;
        http::read_header(*upstream_, upstream_buffer_, *response, ec);
        // 101 is final: the answer to a WebSocket upgrade (forward_websocket; other upgrades are refused).
        auto status = response->get().result();
        bool interim = http::to_status_class(status) == http::status_class::informational;
        if (ec || !interim || status == http::status::switching_protocols)
            return !ec;
        scrub_header(response->get());
        if (relay(agent_, *upstream_, upstream_buffer_, *response, true) != RelayEnd::done)
            return false;
    }
}

// The host's credential for this host, in place of whatever the agent sent
// under its header (its placeholder), and a body the scrub can read.
void Session::set_credential(http::request<http::buffer_body>& request) const
{
    if (!credential_)
        return;
    request.set(credential_->header, credential_->value);
    request.set(http::field::accept_encoding, "identity");
}

// A response to a request that carried the credential whose body the scrub
// cannot read (compressed although the proxy asked for none): refused. One
// without a body (to HEAD, a 204 or 304, Content-Length 0) has nothing to read.
std::optional<Answer> Session::unscrubbable(const ResponseParser& response) const
{
    auto encoding = response.get()[http::field::content_encoding];
    if (!credential_ || response.is_done() || encoding.empty() || boost::beast::iequals(encoding, "identity"))
        return std::nullopt;
    std::string why = "the server sent a body encoded as " + std::string(encoding) +
                      " to a request carrying the credential " + credential_->name +
                      ": the proxy cannot check it for the secret";
    return Answer{http::status::bad_gateway, true, false, "", why,
                  "The egress proxy refused the response: " + why + ".\n"};
}

// Each header field of the response with the credential's secret masked
// (fields of one name kept in their order).
void Session::scrub_header(http::response<http::buffer_body>& response) const
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

// Sends an allowed (or audited) request on and streams the response back.
bool Session::forward(RequestParser& parser, const std::string& path, const Answer& decided)
{
    auto& request = parser.get();
    bool head = request.method() == http::verb::head;
    bool agent_keeps = request.keep_alive();
    // The proxy has decided on the header: it tells the agent to send the body itself.
    if (boost::beast::iequals(request[http::field::expect], "100-continue")) {
        request.erase(http::field::expect);
        boost::system::error_code ec;
        http::write(agent_, http::response<http::empty_body>{http::status::continue_, request.version()}, ec);
    }
    set_credential(request);
    RelayEnd sent = relay(*upstream_, agent_, agent_buffer_, parser);
    if (sent == RelayEnd::reading)
        return false;
    std::optional<ResponseParser> response;
    if (sent != RelayEnd::done || !read_final_header(response, head)) {
        upstream_.reset();
        std::string why = "the server closed the connection";
        return answer(parser, path,
                      failure(decided, http::status::bad_gateway, why, "The egress proxy: " + why + ".\n"));
    }
    if (auto refused = unscrubbable(*response)) {
        upstream_.reset();
        return answer(parser, path, failure(decided, refused->status, refused->reason, refused->body));
    }
    record(parser, path, response->get().result_int(), decided);
    bool upstream_keeps = response->get().keep_alive();
    scrub_header(response->get());
    std::optional<SecretScrub> scrub;
    if (credential_)
        scrub.emplace(credential_->secret);
    RelayEnd returned = relay(agent_, *upstream_, upstream_buffer_, *response, head, scrub ? &*scrub : nullptr);
    bool goes_on = returned == RelayEnd::done && agent_keeps && upstream_keeps;
    if (!goes_on)
        upstream_.reset();
    return goes_on;
}

// Sends an allowed (or audited) WebSocket upgrade on. When the server switches (101) the
// connections carry frames from then on, relayed unread until either side
// ends them, which ends the agent's connection; any other answer goes back as
// a response and ends it too.
bool Session::forward_websocket(RequestParser& parser, const std::string& path, const Answer& decided)
{
    std::optional<ResponseParser> response;
    bool answered = relay(*upstream_, agent_, agent_buffer_, parser) == RelayEnd::done &&
                    read_final_header(response, false);
    bool switched = answered && response->get().result() == http::status::switching_protocols;
    std::string why;
    if (!answered)
        why = "the server closed the connection";
    else if (switched && !boost::beast::iequals(response->get()[http::field::upgrade], "websocket"))
        why = "the server switched to a protocol other than WebSocket";
    if (!why.empty()) {
        upstream_.reset();
        return answer(parser, path,
                      failure(decided, http::status::bad_gateway, why, "The egress proxy: " + why + ".\n"));
    }
    record(parser, path, response->get().result_int(), decided);
    if (relay(agent_, *upstream_, upstream_buffer_, *response, switched) == RelayEnd::done && switched) {
        tunnel(agent_, *upstream_, unread(agent_buffer_), unread(upstream_buffer_), idle_seconds);
        upstream_->shutdown();
    }
    upstream_.reset();
    return false;
}

} // namespace

Proxy::Proxy(ContainerContext context)
    : context_(std::move(context)), server_tls_(make_server_tls()),
      upstream_tls_(make_upstream_tls(context_.upstream_trust))
{
    if (!context_.ca)
        throw Error("the egress proxy of container " + context_.id + ": no certificate authority", EINVAL);
}

void Proxy::serve(UniqueFd client, const Connection& connection) const noexcept
{
    try {
        set_idle_timeout(client.get());
        TlsStream agent(server_tls_.get(), std::move(client));
        auto host = accept_agent(agent, context_, connection);
        if (!host)
            return;
        Session(context_, connection, upstream_tls_.get(), agent, *host).run();
        agent.shutdown();
    } catch (const std::exception& e) {
        spdlog::warn("the egress proxy of container {}: {}", context_.id, e.what());
    }
}

} // namespace cerberus::egress
