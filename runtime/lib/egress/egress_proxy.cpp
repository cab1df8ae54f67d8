// SPDX-License-Identifier: Apache-2.0
#include "egress/egress_proxy.hpp"

#include "base/error.hpp"
#include "egress/egress_tls.hpp"
#include "egress/h2_session.hpp"
#include "egress/http_relay.hpp"
#include "egress/request_judge.hpp"
#include "egress/tunnel.hpp"

#include <boost/beast/websocket/rfc6455.hpp>
#include <spdlog/spdlog.h>

#include <optional>

namespace cerberus::egress {
namespace {

using RequestParser = http::request_parser<http::buffer_body>;

// A WebSocket upgrade (a GET with "Connection: upgrade" and "Upgrade: websocket"): decided by wss:// entries.
bool is_websocket(const RequestParser& parser)
{
    return boost::beast::websocket::is_upgrade(parser.get());
}

RequestHead head_of(const RequestParser& parser)
{
    const auto& request = parser.get();
    std::string target(request.target());
    RequestHead head{std::string(request.method_string()), target.substr(0, target.find('?')), std::nullopt,
                     is_websocket(parser), false};
    if (request.find(http::field::host) != request.end())
        head.host = std::string(request[http::field::host]);
    head.other_upgrade = request.find(http::field::upgrade) != request.end() && !head.websocket;
    return head;
}

std::string_view unread(const boost::beast::flat_buffer& buffer)
{
    return {static_cast<const char*>(buffer.data().data()), buffer.size()};
}

// One HTTP/1.1 agent connection after its handshake: requests read, judged and sent on in turn.
class Session {
public:
    Session(const Judge& judge, TlsStream& agent) : judge_(judge), agent_(agent) {}

    // Serves requests until either side ends the connection.
    void run()
    {
        while (serve_one()) {
        }
    }

private:
    bool serve_one();
    bool forward(RequestParser& parser, const RequestHead& head, const Answer& decided);
    bool forward_websocket(RequestParser& parser, const RequestHead& head, const Answer& decided);
    bool read_final_header(std::optional<ResponseParser>& response, bool head);
    bool answer(const RequestParser& parser, const RequestHead& head, const Answer& answer);

    const Judge& judge_;
    TlsStream& agent_;
    boost::beast::flat_buffer agent_buffer_;
    std::optional<TlsStream> upstream_;
    boost::beast::flat_buffer upstream_buffer_;
};

// Reads one request's header and either answers it or sends it on; whether
// the connection goes on to another request.
bool Session::serve_one()
{
    RequestParser parser;
    limit(parser);
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
    RequestHead head = head_of(parser);
    if (auto refused = judge_.refusal(head))
        return answer(parser, head, *refused);
    Answer decided = judge_.decide(head);
    if (!decided.passes())
        return answer(parser, head, decided);
    if (upstream_ && !reusable(*upstream_, upstream_buffer_))
        upstream_.reset();
    if (!upstream_) {
        upstream_buffer_.clear(); // of the connection before
        if (auto failed = judge_.open_upstream(upstream_, decided))
            return answer(parser, head, *failed);
    }
    if (head.websocket)
        return forward_websocket(parser, head, decided);
    return forward(parser, head, decided);
}

// Writes the proxy's own answer and records it; the connection goes on when
// the agent wants it to and no unread request body is left in the way.
bool Session::answer(const RequestParser& parser, const RequestHead& head, const Answer& answer)
{
    judge_.record(head, static_cast<int>(answer.status), answer);
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
        limit(*response);
        response->skip(head);
        boost::system::error_code ec;
        http::read_header(*upstream_, upstream_buffer_, *response, ec);
        // 101 is final: the answer to a WebSocket upgrade (forward_websocket; other upgrades are refused).
        auto status = response->get().result();
        bool interim = http::to_status_class(status) == http::status_class::informational;
        if (ec || !interim || status == http::status::switching_protocols)
            return !ec;
        judge_.scrub_header(response->get());
        if (relay(agent_, *upstream_, upstream_buffer_, *response, true) != RelayEnd::done)
            return false;
    }
}

// Sends an allowed (or audited) request on and streams the response back.
bool Session::forward(RequestParser& parser, const RequestHead& head, const Answer& decided)
{
    auto& request = parser.get();
    bool head_only = request.method() == http::verb::head;
    bool agent_keeps = request.keep_alive();
    // The proxy has decided on the header: it tells the agent to send the body itself.
    if (boost::beast::iequals(request[http::field::expect], "100-continue")) {
        request.erase(http::field::expect);
        boost::system::error_code ec;
        http::write(agent_, http::response<http::empty_body>{http::status::continue_, request.version()}, ec);
    }
    judge_.set_credential(request);
    RelayEnd sent = relay(*upstream_, agent_, agent_buffer_, parser);
    if (sent == RelayEnd::reading)
        return false;
    std::optional<ResponseParser> response;
    if (sent != RelayEnd::done || !read_final_header(response, head_only)) {
        upstream_.reset();
        return answer(parser, head, Judge::bad_gateway(decided, "the server closed the connection"));
    }
    if (auto refused =
            judge_.unscrubbable(response->get()[http::field::content_encoding], !response->is_done(), decided)) {
        upstream_.reset();
        return answer(parser, head, *refused);
    }
    judge_.record(head, response->get().result_int(), decided);
    bool upstream_keeps = response->get().keep_alive();
    judge_.scrub_header(response->get());
    std::optional<SecretScrub> scrub = judge_.body_scrub();
    RelayEnd returned = relay(agent_, *upstream_, upstream_buffer_, *response, head_only, scrub ? &*scrub : nullptr);
    bool goes_on = returned == RelayEnd::done && agent_keeps && upstream_keeps;
    if (!goes_on)
        upstream_.reset();
    return goes_on;
}

// Sends an allowed (or audited) WebSocket upgrade on. When the server switches (101) the
// connections carry frames from then on, relayed unread until either side
// ends them, which ends the agent's connection; any other answer goes back as
// a response and ends it too.
bool Session::forward_websocket(RequestParser& parser, const RequestHead& head, const Answer& decided)
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
        return answer(parser, head, Judge::bad_gateway(decided, why));
    }
    judge_.record(head, response->get().result_int(), decided);
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
        Judge judge(context_, connection, upstream_tls_.get(), *host);
        if (agent_chose_h2(agent))
            serve_h2(judge, agent);
        else
            Session(judge, agent).run();
        agent.shutdown();
    } catch (const std::exception& e) {
        spdlog::warn("the egress proxy of container {}: {}", context_.id, e.what());
    }
}

} // namespace cerberus::egress
