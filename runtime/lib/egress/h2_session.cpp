// SPDX-License-Identifier: Apache-2.0
#include "egress/h2_session.hpp"

#include "base/error.hpp"
#include "base/text.hpp"
#include "egress/http_relay.hpp"

#include <boost/asio/write.hpp>
#include <nghttp2/nghttp2.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::egress {
namespace {

constexpr size_t header_list_limit = 64 * 1024; // as the HTTP/1.1 side's header_limit
constexpr uint32_t concurrent_streams = 100;
// The flow-control windows the agent may fill before the proxy's WINDOW_UPDATE: nghttp2 holds no DATA (each
// chunk goes upstream as it comes, blocking while the server is slow), so a window costs no memory, and
// HTTP/2's default of 64 KiB held an upload to a round trip between proxy and agent every 32 KiB.
constexpr uint32_t stream_window = 1 << 20;
constexpr int32_t connection_window = 1 << 24;

// The proxy's own connection to the server and what it read ahead; one stream's at a time.
struct Upstream {
    std::optional<TlsStream> tls;
    boost::beast::flat_buffer buffer;
};

// HTTP/1.1's connection-specific fields, which HTTP/2 does not carry (RFC 9113 8.2.2).
bool connection_specific(boost::beast::string_view name)
{
    for (const char* hop : {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te"})
        if (boost::beast::iequals(name, hop))
            return true;
    return false;
}

nghttp2_nv field(const std::string& name, const std::string& value)
{
    return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
            reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
            NGHTTP2_NV_FLAG_NONE};
}

// One request stream: its header as received, then either the proxy's own answer or the exchange upstream.
struct Stream {
    enum class State { receiving, forwarding, answered };

    int32_t id;
    State state = State::receiving;
    size_t header_bytes = 0;
    std::string method, scheme, authority, target;
    std::optional<std::string> host_header;
    std::vector<std::pair<std::string, std::string>> fields; // the regular ones, in order
    RequestHead head;
    Answer decided{http::status::ok};
    std::unique_ptr<Upstream> upstream;
    http::request<http::buffer_body> request;
    std::optional<http::request_serializer<http::buffer_body>> sending;
    bool upload_failed = false;
    std::optional<ResponseParser> response;
    std::optional<SecretScrub> scrub;
    std::string pending; // response bytes for DATA frames: the proxy's answer, or the server's scrubbed
    size_t pending_sent = 0; // how many of them have gone
};

class H2Session {
public:
    H2Session(const Judge& judge, TlsStream& agent);
    void run();

private:
    using SessionPtr = std::unique_ptr<nghttp2_session, decltype(&nghttp2_session_del)>;

    bool flush();
    void write_outgoing();
    Stream* stream(int32_t id);
    void begin_request(Stream& stream, bool has_body);
    void end_request(Stream& stream);
    void answer(Stream& stream, const Answer& answer);
    bool send_body(Stream& stream, const char* data, size_t size, bool last);
    bool read_final_header(Stream& stream, bool head);
    void respond(Stream& stream, int status, const http::fields& header, bool has_body);
    ssize_t fill(Stream& stream, uint8_t* out, size_t length, uint32_t* flags);
    void closed(int32_t id);

    // The callbacks: C frames between nghttp2 and the session, so nothing is thrown through them.
    template <typename Fn>
    static int guarded(void* self, Fn&& fn);
    static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* self);
    static int on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
                         const uint8_t* value, size_t value_length, uint8_t, void* self);
    static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self);
    static int on_data_chunk(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t length, void* self);
    static int on_stream_close(nghttp2_session*, int32_t id, uint32_t, void* self);
    static ssize_t on_read_body(nghttp2_session*, int32_t, uint8_t* out, size_t length, uint32_t* flags,
                                nghttp2_data_source* source, void* self);

    const Judge& judge_;
    TlsStream& agent_;
    SessionPtr session_{nullptr, nghttp2_session_del};
    std::map<int32_t, std::unique_ptr<Stream>> streams_;
    std::unique_ptr<Upstream> idle_upstream_; // kept open by a stream that ended cleanly, for the next
    std::string outgoing_; // frames nghttp2 gave, gathered into writes of up to 64 KiB
    bool agent_failed_ = false; // a write to the agent failed: the connection ends
};

H2Session::H2Session(const Judge& judge, TlsStream& agent) : judge_(judge), agent_(agent)
{
    nghttp2_session_callbacks* callbacks = nullptr;
    if (nghttp2_session_callbacks_new(&callbacks) != 0)
        throw Error("making nghttp2's callbacks", ENOMEM);
    std::unique_ptr<nghttp2_session_callbacks, decltype(&nghttp2_session_callbacks_del)> owned(
        callbacks, nghttp2_session_callbacks_del);
    nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback(callbacks, on_header);
    nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, on_frame_recv);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, on_data_chunk);
    nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, on_stream_close);
    nghttp2_session* session = nullptr;
    if (nghttp2_session_server_new(&session, callbacks, this) != 0)
        throw Error("making an nghttp2 server session", ENOMEM);
    session_.reset(session);
    const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, concurrent_streams},
                                               {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, header_list_limit},
                                               {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, stream_window}};
    nghttp2_submit_settings(session_.get(), NGHTTP2_FLAG_NONE, settings, std::size(settings));
    nghttp2_session_set_local_window_size(session_.get(), NGHTTP2_FLAG_NONE, 0, connection_window);
}

// Frames in, frames out, until neither side has more to say.
void H2Session::run()
{
    char incoming[64 * 1024];
    while (flush() && (nghttp2_session_want_read(session_.get()) || nghttp2_session_want_write(session_.get()))) {
        boost::system::error_code ec;
        size_t got = agent_.read_some(boost::asio::buffer(incoming), ec);
        if (ec || nghttp2_session_mem_recv(session_.get(), reinterpret_cast<uint8_t*>(incoming), got) < 0)
            return;
    }
}

// Writes what nghttp2 has to send, gathered into writes of up to 64 KiB; whether the agent took it.
bool H2Session::flush()
{
    while (true) {
        const uint8_t* data = nullptr;
        ssize_t size = nghttp2_session_mem_send(session_.get(), &data);
        if (size < 0 || agent_failed_)
            return false;
        outgoing_.append(reinterpret_cast<const char*>(data), static_cast<size_t>(size));
        if (size == 0 || outgoing_.size() >= 64 * 1024)
            write_outgoing();
        if (size == 0)
            return !agent_failed_;
    }
}

void H2Session::write_outgoing()
{
    if (outgoing_.empty() || agent_failed_)
        return;
    boost::system::error_code ec;
    boost::asio::write(agent_, boost::asio::buffer(outgoing_), ec);
    agent_failed_ = bool(ec);
    outgoing_.clear();
}

Stream* H2Session::stream(int32_t id)
{
    auto found = streams_.find(id);
    return found == streams_.end() ? nullptr : found->second.get();
}

// The request's header has come: judged, then answered or its header sent on.
void H2Session::begin_request(Stream& stream, bool has_body)
{
    stream.head = RequestHead{stream.method, stream.target.substr(0, stream.target.find('?')), std::nullopt};
    if (!stream.authority.empty())
        stream.head.host = stream.authority;
    else
        stream.head.host = stream.host_header;
    if (stream.scheme != "https")
        return answer(stream, Answer{http::status::bad_request, false, false, "", "the :scheme is not https",
                                     "The egress proxy takes https requests on a TLS connection.\n"});
    std::optional<Answer> refused = judge_.refusal(stream.head);
    if (!refused && stream.host_header && !stream.authority.empty()) // both must name the server
        refused = judge_.refusal_by_host(*stream.host_header);
    if (refused)
        return answer(stream, *refused);
    stream.decided = judge_.decide(stream.head);
    if (!stream.decided.passes())
        return answer(stream, stream.decided);
    if (idle_upstream_ && reusable(*idle_upstream_->tls, idle_upstream_->buffer))
        stream.upstream = std::move(idle_upstream_);
    idle_upstream_.reset();
    if (!stream.upstream) {
        stream.upstream = std::make_unique<Upstream>();
        if (auto failed = judge_.open_upstream(stream.upstream->tls, stream.decided))
            return answer(stream, *failed);
    }
    auto& request = stream.request;
    request.version(11);
    request.method_string(stream.method);
    request.target(stream.target);
    request.set(http::field::host, *stream.head.host);
    bool expects_continue = false;
    for (auto& [name, value] : stream.fields) {
        if (name == "te") // "trailers" at most (nghttp2 refuses others): a hop's, not the server's
            continue;
        if (name == "expect") { // the proxy tells the agent to send the body itself, below
            expects_continue = boost::beast::iequals(value, "100-continue");
            continue;
        }
        // HTTP/2 may split Cookie into several fields; HTTP/1.1 has one, joined by "; " (RFC 9113 8.2.3).
        if (name == "cookie" && request.find(http::field::cookie) != request.end())
            request.set(http::field::cookie, std::string(request[http::field::cookie]) + "; " + value);
        else
            request.insert(name, value);
    }
    if (request.find(http::field::content_length) == request.end() && has_body)
        request.chunked(true); // a body of a length not given, as its DATA frames come
    judge_.set_credential(request);
    stream.state = Stream::State::forwarding;
    stream.sending.emplace(request);
    boost::system::error_code ec;
    http::write_header(*stream.upstream->tls, *stream.sending, ec);
    stream.upload_failed = bool(ec);
    if (expects_continue && !ec) {
        const std::string status = ":status", code = "100";
        nghttp2_nv interim = field(status, code);
        nghttp2_submit_headers(session_.get(), NGHTTP2_FLAG_NONE, stream.id, nullptr, &interim, 1, nullptr);
    }
}

// Part of the request body (or its end) on to the server as its DATA frame comes; whether it went.
bool H2Session::send_body(Stream& stream, const char* data, size_t size, bool last)
{
    if (stream.upload_failed)
        return false;
    auto& body = stream.request.body();
    body.data = size ? const_cast<char*>(data) : nullptr;
    body.size = size;
    body.more = !last;
    boost::system::error_code ec;
    http::write(*stream.upstream->tls, *stream.sending, ec);
    stream.upload_failed = ec && ec != http::error::need_buffer;
    return !stream.upload_failed;
}

// Reads the response's header, interim ones (1xx) dropped: the agent gets the final one only.
bool H2Session::read_final_header(Stream& stream, bool head)
{
    while (true) {
        stream.response.emplace();
        limit(*stream.response);
        stream.response->skip(head);
        boost::system::error_code ec;
        http::read_header(*stream.upstream->tls, stream.upstream->buffer, *stream.response, ec);
        if (ec)
            return false;
        if (http::to_status_class(stream.response->get().result()) != http::status_class::informational)
            return true;
    }
}

// The request has ended: its body finished upstream, the response's header read and sent back.
void H2Session::end_request(Stream& stream)
{
    if (stream.state != Stream::State::forwarding)
        return;
    bool head = stream.method == "HEAD";
    if (!send_body(stream, nullptr, 0, true) || !read_final_header(stream, head)) {
        stream.upstream.reset();
        return answer(stream, Judge::bad_gateway(stream.decided, "the server closed the connection"));
    }
    auto& response = stream.response->get();
    bool has_body = !stream.response->is_done();
    if (auto refused = judge_.unscrubbable(response[http::field::content_encoding], has_body, stream.decided)) {
        stream.upstream.reset();
        return answer(stream, *refused);
    }
    judge_.record(stream.head, response.result_int(), stream.decided);
    judge_.scrub_header(response);
    stream.scrub = judge_.body_scrub();
    respond(stream, response.result_int(), response, has_body);
}

// The proxy's own answer on the stream, recorded.
void H2Session::answer(Stream& stream, const Answer& answer)
{
    judge_.record(stream.head, static_cast<int>(answer.status), answer);
    stream.state = Stream::State::answered;
    stream.upstream.reset();
    stream.pending = answer.body;
    http::fields header;
    header.set(http::field::content_type, "text/plain; charset=utf-8");
    header.set(http::field::content_length, std::to_string(answer.body.size()));
    respond(stream, static_cast<int>(answer.status), header, true);
}

void H2Session::respond(Stream& stream, int status, const http::fields& header, bool has_body)
{
    std::vector<std::string> texts{":status", std::to_string(status)};
    for (const auto& entry : header)
        if (!connection_specific(entry.name_string())) {
            texts.push_back(ascii_lower(std::string(entry.name_string())));
            texts.emplace_back(entry.value());
        }
    std::vector<nghttp2_nv> fields;
    for (size_t i = 0; i < texts.size(); i += 2)
        fields.push_back(field(texts[i], texts[i + 1]));
    nghttp2_data_provider body{};
    body.source.ptr = &stream;
    body.read_callback = on_read_body;
    nghttp2_submit_response(session_.get(), stream.id, fields.data(), fields.size(), has_body ? &body : nullptr);
}

// The next DATA frame's bytes: the proxy's answer, or the server's body read as the agent's window allows.
ssize_t H2Session::fill(Stream& stream, uint8_t* out, size_t length, uint32_t* flags)
{
    char chunk[64 * 1024]; // what the upstream TLS connection reads ahead: four DATA frames of the default size
    auto unsent = [&] { return stream.pending.size() - stream.pending_sent; };
    while (stream.state == Stream::State::forwarding && unsent() == 0 && !stream.response->is_done()) {
        stream.pending_sent = 0;
        // What the agent has been given so far goes before a wait on the server, whose body may come in parts
        // spaced in time (server-sent events): each reaches the agent as it comes.
        write_outgoing();
        if (agent_failed_)
            return NGHTTP2_ERR_CALLBACK_FAILURE; // the connection ends
        auto& body = stream.response->get().body();
        body.data = chunk;
        body.size = sizeof chunk;
        boost::system::error_code ec;
        read_body_part(*stream.upstream->tls, stream.upstream->buffer, *stream.response, ec);
        if (ec) {
            stream.upstream.reset();
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; // the stream reset: the agent sees the body cut
        }
        std::string_view got(chunk, sizeof chunk - body.size);
        if (!stream.scrub) {
            stream.pending.assign(got);
            continue;
        }
        stream.pending.assign(stream.scrub->feed(got));
        if (stream.response->is_done())
            stream.pending.append(stream.scrub->finish());
    }
    size_t size = std::min(length, unsent());
    std::copy_n(stream.pending.data() + stream.pending_sent, size, out);
    stream.pending_sent += size;
    bool done = stream.state == Stream::State::answered || stream.response->is_done();
    if (done && unsent() == 0)
        *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(size);
}

// A stream over: its connection upstream kept for the next when the exchange ended cleanly.
void H2Session::closed(int32_t id)
{
    auto found = streams_.find(id);
    if (found == streams_.end())
        return;
    Stream& stream = *found->second;
    bool clean = stream.state == Stream::State::forwarding && stream.upstream && stream.response &&
                 stream.response->is_done() && stream.response->get().keep_alive() &&
                 stream.pending_sent == stream.pending.size();
    if (clean && !idle_upstream_)
        idle_upstream_ = std::move(stream.upstream);
    streams_.erase(found);
}

template <typename Fn>
int H2Session::guarded(void* self, Fn&& fn)
{
    try {
        fn(*static_cast<H2Session*>(self));
        return 0;
    } catch (const std::exception&) {
        return NGHTTP2_ERR_CALLBACK_FAILURE; // the connection ends
    }
}

int H2Session::on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* self)
{
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    return guarded(self, [&](H2Session& session) {
        auto stream = std::make_unique<Stream>();
        stream->id = frame->hd.stream_id;
        session.streams_[stream->id] = std::move(stream);
    });
}

int H2Session::on_header(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
                         const uint8_t* value, size_t value_length, uint8_t, void* self)
{
    auto* stream = static_cast<H2Session*>(self)->stream(frame->hd.stream_id);
    if (!stream || stream->state != Stream::State::receiving) // a trailer: not sent on
        return 0;
    stream->header_bytes += name_length + value_length + 32; // as SETTINGS_MAX_HEADER_LIST_SIZE counts
    if (stream->header_bytes > header_list_limit)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE; // the stream reset
    return guarded(self, [&](H2Session&) {
        std::string key(reinterpret_cast<const char*>(name), name_length);
        std::string text(reinterpret_cast<const char*>(value), value_length);
        if (key == ":method")
            stream->method = std::move(text);
        else if (key == ":scheme")
            stream->scheme = std::move(text);
        else if (key == ":authority")
            stream->authority = std::move(text);
        else if (key == ":path")
            stream->target = std::move(text);
        else if (key == "host")
            stream->host_header = std::move(text);
        else
            stream->fields.emplace_back(std::move(key), std::move(text));
    });
}

int H2Session::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* self)
{
    auto* stream = static_cast<H2Session*>(self)->stream(frame->hd.stream_id);
    if (!stream || (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA))
        return 0;
    bool ends = frame->hd.flags & NGHTTP2_FLAG_END_STREAM;
    return guarded(self, [&](H2Session& session) {
        if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
            session.begin_request(*stream, !ends);
        if (ends)
            session.end_request(*stream);
    });
}

int H2Session::on_data_chunk(nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t length, void* self)
{
    auto* stream = static_cast<H2Session*>(self)->stream(id);
    if (!stream || stream->state != Stream::State::forwarding) // answered already: the rest is dropped
        return 0;
    return guarded(self, [&](H2Session& session) {
        session.send_body(*stream, reinterpret_cast<const char*>(data), length, false);
    });
}

int H2Session::on_stream_close(nghttp2_session*, int32_t id, uint32_t, void* self)
{
    return guarded(self, [&](H2Session& session) { session.closed(id); });
}

ssize_t H2Session::on_read_body(nghttp2_session*, int32_t, uint8_t* out, size_t length, uint32_t* flags,
                                nghttp2_data_source* source, void* self)
{
    try {
        return static_cast<H2Session*>(self)->fill(*static_cast<Stream*>(source->ptr), out, length, flags);
    } catch (const std::exception&) {
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    }
}

} // namespace

void serve_h2(const Judge& judge, TlsStream& agent)
{
    H2Session(judge, agent).run();
}

} // namespace cerberus::egress
