// SPDX-License-Identifier: Apache-2.0
// The egress proxy's HTTP/2 side (egress/h2_session.hpp) with an nghttp2
// client that offers only h2: each stream judged as an HTTP/1.1 request is
// (the same 403, record, audit mode), sent on to the HTTP/1.1 test server,
// bodies of megabytes streamed both ways. Every refusal has its allowed
// control beside it.
#include "egress_fixture.hpp"

#include <nghttp2/nghttp2.h>

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

using namespace cerberus;
using namespace cerberus::test;

namespace {

struct H2Response {
    int status = 0;
    std::string body;
    bool closed = false;
};

// A client session over a TLS connection to the proxy that chose h2; requests run one at a time to their end.
class H2Client {
public:
    explicit H2Client(ProxyBench& bench) : ctx_(SSL_CTX_new(TLS_client_method()))
    {
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_.get()), bench.container_ca->certificate());
        SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
        const unsigned char h2_only[] = "\x02h2";
        SSL_CTX_set_alpn_protos(ctx_.get(), h2_only, sizeof h2_only - 1);
        int pair[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
        bench.serving.emplace_back(
            [&bench, fd = pair[0]]() mutable { bench.proxy->serve(UniqueFd(fd), bench.connection); });
        stream_.emplace(ctx_.get(), UniqueFd(pair[1]));
        SSL_set_tlsext_host_name(stream_->ssl(), "api.example.org");
        REQUIRE(stream_->connect());
        const unsigned char* chosen = nullptr;
        unsigned int length = 0;
        SSL_get0_alpn_selected(stream_->ssl(), &chosen, &length);
        REQUIRE(std::string(reinterpret_cast<const char*>(chosen), length) == "h2");

        nghttp2_session_callbacks* callbacks = nullptr;
        nghttp2_session_callbacks_new(&callbacks);
        nghttp2_session_callbacks_set_on_header_callback(
            callbacks, [](nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t name_length,
                          const uint8_t* value, size_t value_length, uint8_t, void* self) {
                if (std::string_view(reinterpret_cast<const char*>(name), name_length) == ":status")
                    static_cast<H2Client*>(self)->responses_[frame->hd.stream_id].status =
                        std::stoi(std::string(reinterpret_cast<const char*>(value), value_length));
                return 0;
            });
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(
            callbacks, [](nghttp2_session*, uint8_t, int32_t id, const uint8_t* data, size_t length, void* self) {
                static_cast<H2Client*>(self)->responses_[id].body.append(reinterpret_cast<const char*>(data), length);
                return 0;
            });
        nghttp2_session_callbacks_set_on_stream_close_callback(
            callbacks, [](nghttp2_session*, int32_t id, uint32_t, void* self) {
                static_cast<H2Client*>(self)->responses_[id].closed = true;
                return 0;
            });
        nghttp2_session_client_new(&session_, callbacks, this);
        nghttp2_session_callbacks_del(callbacks);
        nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, nullptr, 0);
    }
    ~H2Client()
    {
        nghttp2_session_del(session_);
        stream_->shutdown();
    }

    // extra: regular fields after the pseudo-header ones.
    H2Response send(const std::string& method, const std::string& path, const std::string& body = "",
                    const std::string& authority = "api.example.org",
                    std::vector<std::pair<std::string, std::string>> extra = {})
    {
        std::vector<std::pair<std::string, std::string>> texts = {
            {":method", method}, {":scheme", "https"}, {":authority", authority}, {":path", path}};
        texts.insert(texts.end(), extra.begin(), extra.end());
        std::vector<nghttp2_nv> fields;
        for (auto& [name, value] : texts)
            fields.push_back({reinterpret_cast<uint8_t*>(name.data()), reinterpret_cast<uint8_t*>(value.data()),
                              name.size(), value.size(), NGHTTP2_NV_FLAG_NONE});
        upload_ = body;
        nghttp2_data_provider provider{};
        provider.read_callback = [](nghttp2_session*, int32_t, uint8_t* out, size_t length, uint32_t* flags,
                                    nghttp2_data_source*, void* self) -> ssize_t {
            auto& upload = static_cast<H2Client*>(self)->upload_;
            size_t size = std::min(length, upload.size());
            std::copy_n(upload.data(), size, out);
            upload.erase(0, size);
            if (upload.empty())
                *flags |= NGHTTP2_DATA_FLAG_EOF;
            return static_cast<ssize_t>(size);
        };
        int32_t id = nghttp2_submit_request(session_, nullptr, fields.data(), fields.size(),
                                            body.empty() ? nullptr : &provider, nullptr);
        REQUIRE(id > 0);
        char incoming[16 * 1024];
        while (!responses_[id].closed) {
            const uint8_t* data = nullptr;
            ssize_t size;
            while ((size = nghttp2_session_mem_send(session_, &data)) > 0)
                boost::asio::write(*stream_, boost::asio::buffer(data, static_cast<size_t>(size)));
            if (responses_[id].closed)
                break;
            size_t got = stream_->read_some(boost::asio::buffer(incoming));
            REQUIRE(nghttp2_session_mem_recv(session_, reinterpret_cast<uint8_t*>(incoming), got) >= 0);
        }
        return responses_[id];
    }

private:
    egress::SslCtxPtr ctx_;
    std::optional<TlsStream> stream_;
    nghttp2_session* session_ = nullptr;
    std::map<int32_t, H2Response> responses_;
    std::string upload_;
};

} // namespace

TEST_CASE("egress proxy over HTTP/2: each stream judged as an HTTP/1.1 request is, the allowed sent on")
{
    ProxyBench bench(bench_rules, bench_admitted);
    {
        H2Client client(bench);
        auto allowed = client.send("GET", "/repos/acme/widgets?page=2");
        CHECK(allowed.status == 200);
        CHECK(allowed.body == "hello GET /repos/acme/widgets?page=2");
        auto records = bench.taken_records();
        REQUIRE(records.size() == 1);
        CHECK(records[0].allowed);
        CHECK(records[0].url == "https://api.example.org/repos/acme/widgets");
        CHECK(records[0].status == 200);

        auto denied = client.send("POST", "/repos/acme/widgets", "a=1");
        CHECK(denied.status == 403);
        CHECK(contains(denied.body, "POST https://api.example.org/repos/acme/widgets is not in allowed_http"));
        CHECK(contains(denied.body, "  POST https://api.example.org/upload\n"));
        check_refused_post(bench.taken_records());

        // The control: the allowed POST, megabytes up, then down, on the same connection and upstream.
        auto upload = client.send("POST", "/upload", pattern_body(3 << 20));
        CHECK(upload.status == 200);
        CHECK(upload.body == "received 3145728 bytes, the pattern");
        auto download = client.send("GET", "/repos/acme/big?bytes=5000000");
        CHECK(download.status == 200);
        CHECK((download.body == pattern_body(5000000)));

        auto fronted = client.send("GET", "/repos/acme/widgets", "", "other.example.org");
        CHECK(fronted.status == 403);
        CHECK(contains(fronted.body, "the TLS server name was api.example.org"));
        // HTTP/2 may send Cookie as several fields: HTTP/1.1 gets one (the control: one field passes as it is).
        auto cookies =
            client.send("GET", "/repos/acme/c", "", "api.example.org", {{"cookie", "a=1"}, {"cookie", "b=2"}});
        CHECK(cookies.body == "hello GET /repos/acme/c cookie=a=1; b=2");
        auto cookie = client.send("GET", "/repos/acme/c", "", "api.example.org", {{"cookie", "a=1"}});
        CHECK(cookie.body == "hello GET /repos/acme/c cookie=a=1");
        auto dots = client.send("GET", "/repos/acme/../secret");
        CHECK(dots.status == 400);
        CHECK(bench.upstream.connections == 1);
    }
    bench.finish_last_client();
}

TEST_CASE("egress proxy over HTTP/2: a connection upstream the server closed while idle is not used again")
{
    ProxyBench bench(bench_rules, bench_admitted);
    {
        H2Client client(bench);
        CHECK(client.send("GET", "/repos/acme/one").status == 200);
        CHECK(client.send("GET", "/repos/acme/then-close").status == 200);
        std::this_thread::sleep_for(std::chrono::milliseconds(200)); // the server's close reaches the proxy
        auto after = client.send("GET", "/repos/acme/two");
        CHECK(after.status == 200);
        CHECK(after.body == "hello GET /repos/acme/two");
        CHECK(bench.upstream.connections == 2); // the control: the first connection served two streams
    }
    bench.finish_last_client();
}

TEST_CASE("egress proxy over HTTP/2: in audit mode a stream the rules refuse is sent on, recorded audit")
{
    ProxyBench bench(bench_rules, bench_admitted, true, true);
    {
        H2Client client(bench);
        auto audited = client.send("POST", "/repos/acme/widgets", "a=1");
        CHECK(audited.status == 200);
        CHECK(audited.body == "received 3 bytes, not the pattern");
        auto records = bench.taken_records();
        REQUIRE(records.size() == 1);
        CHECK(records[0].audited);
        CHECK_FALSE(records[0].allowed);
        CHECK(records[0].rule == "not in allowed_http");
        auto allowed = client.send("GET", "/repos/acme/widgets");
        CHECK(allowed.status == 200);
        records = bench.taken_records();
        REQUIRE(records.size() == 1);
        CHECK(records[0].allowed);
        CHECK_FALSE(records[0].audited);
    }
    bench.finish_last_client();
}
