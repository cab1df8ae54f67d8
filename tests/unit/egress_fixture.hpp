// SPDX-License-Identifier: Apache-2.0
// The egress proxy's test bench: a real HTTPS server on 127.0.0.1 (its
// certificate from a CA the test makes), the proxy serving each client
// connection on a thread of its own over a socketpair, and a real OpenSSL
// client trusting the container's CA. Nothing leaves loopback.
#pragma once

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "egress/egress_proxy.hpp"
#include "egress/tls_stream.hpp"
#include "policy/policy.hpp"
#include "policy/policy_http.hpp"
#include "temp_dir.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <signal.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cerberus::test {

namespace http = boost::beast::http;
using egress::TlsStream;

// The policy the proxy tests run under, and the names the stand-in for the DNS gate admits.
inline const std::vector<std::string> bench_rules = {
    "GET https://api.example.org/repos/acme/*",
    "POST https://api.example.org/upload",
    "GET https://fronted.example.org/*",
    "GET https://other.example.org/*",
};
inline const std::set<std::string> bench_admitted = {"api.example.org", "other.example.org"};

inline bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

// The records hold one: a POST allowed_http refused, answered 403.
inline void check_refused_post(const std::vector<egress::HttpRecord>& records)
{
    REQUIRE(records.size() == 1);
    CHECK(records[0].kind == "http");
    CHECK_FALSE(records[0].allowed);
    CHECK(records[0].method == "POST");
    CHECK(records[0].status == 403);
    CHECK(records[0].rule == "not in allowed_http");
}

// A body of n bytes whose every position is checkable.
inline std::string pattern_body(size_t n)
{
    std::string body(n, '\0');
    for (size_t i = 0; i < n; ++i)
        body[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
    return body;
}

// An HTTPS server for one host name on 127.0.0.1, serving connections one
// after another: GET /big?bytes=N answers N pattern bytes, a request with a
// body answers "received N bytes" (and whether they were the pattern), any
// other "hello METHOD TARGET" (and " cookie=VALUE" for a Cookie field), after a 102 Processing for /repos/acme/slow; a
// WebSocket upgrade is answered 101, then every byte echoed (no frames read).
// After answering /repos/acme/then-close it closes the connection, as a
// server does with one idle too long.
class TestUpstream {
public:
    TestUpstream(const egress::CertificateAuthority& issuer, const std::string& host_name)
        : ctx_(SSL_CTX_new(TLS_server_method()))
    {
        auto leaf = issuer.leaf_for(host_name);
        REQUIRE(SSL_CTX_use_certificate(ctx_.get(), leaf->certificate.get()) == 1);
        REQUIRE(SSL_CTX_use_PrivateKey(ctx_.get(), leaf->key.get()) == 1);
        listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in addr{AF_INET, 0, {htonl(INADDR_LOOPBACK)}, {}};
        REQUIRE(::bind(listener_.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
        REQUIRE(::listen(listener_.get(), 8) == 0);
        socklen_t len = sizeof addr;
        ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&addr), &len);
        port = ntohs(addr.sin_port);
        thread_ = std::thread([this] { accept_loop(); });
    }
    ~TestUpstream()
    {
        ::shutdown(listener_.get(), SHUT_RDWR); // wakes accept()
        thread_.join();
    }

    uint16_t port = 0;
    std::atomic<int> connections{0};

private:
    void accept_loop()
    {
        while (true) {
            UniqueFd fd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!fd)
                return;
            ++connections;
            TlsStream stream(ctx_.get(), std::move(fd));
            if (stream.accept())
                serve(stream);
        }
    }

    static void serve(TlsStream& stream)
    {
        boost::beast::flat_buffer buffer;
        while (true) {
            http::request_parser<http::string_body> parser;
            parser.body_limit(64 << 20);
            boost::system::error_code ec;
            http::read(stream, buffer, parser, ec);
            if (ec)
                return;
            auto& request = parser.get();
            if (boost::beast::websocket::is_upgrade(request))
                return echo_after_upgrade(stream);
            if (request.target() == "/repos/acme/slow")
                http::write(stream, http::response<http::empty_body>{http::status::processing, 11}, ec);
            http::response<http::string_body> response{http::status::ok, 11};
            response.body() = answer_to(request);
            response.keep_alive(request.keep_alive());
            response.prepare_payload();
            http::write(stream, response, ec);
            if (ec || !request.keep_alive() || request.target() == "/repos/acme/then-close")
                return stream.shutdown();
        }
    }

    static void echo_after_upgrade(TlsStream& stream)
    {
        http::response<http::empty_body> switching{http::status::switching_protocols, 11};
        switching.set(http::field::upgrade, "websocket");
        switching.set(http::field::connection, "Upgrade");
        boost::system::error_code ec;
        http::write(stream, switching, ec);
        char bytes[4096];
        while (!ec) {
            size_t got = stream.read_some(boost::asio::buffer(bytes), ec);
            if (!ec)
                boost::asio::write(stream, boost::asio::buffer(bytes, got), ec);
        }
    }

    static std::string answer_to(const http::request<http::string_body>& request)
    {
        std::string target(request.target());
        if (target.rfind("/repos/acme/big?bytes=", 0) == 0)
            return pattern_body(std::stoul(target.substr(target.find('=') + 1)));
        if (!request.body().empty())
            return "received " + std::to_string(request.body().size()) + " bytes" +
                   (request.body() == pattern_body(request.body().size()) ? ", the pattern" : ", not the pattern");
        std::string cookie = request.count(http::field::cookie) == 1
                                 ? " cookie=" + std::string(request[http::field::cookie])
                                 : request.count(http::field::cookie) > 1 ? " cookie fields: several" : "";
        return "hello " + std::string(request.method_string()) + " " + target + cookie;
    }

    egress::SslCtxPtr ctx_;
    UniqueFd listener_;
    std::thread thread_;
};

// An agent's TLS client over one end of a socketpair.
class TestClient {
public:
    // trusted: the CA the client trusts; server_name: "" sends no SNI.
    TestClient(UniqueFd fd, X509* trusted, const std::string& server_name) : ctx_(SSL_CTX_new(TLS_client_method()))
    {
        X509_STORE_add_cert(SSL_CTX_get_cert_store(ctx_.get()), trusted);
        SSL_CTX_set_verify(ctx_.get(), SSL_VERIFY_PEER, nullptr);
        stream_.emplace(ctx_.get(), std::move(fd));
        if (!server_name.empty()) {
            SSL_set_tlsext_host_name(stream_->ssl(), server_name.c_str());
            SSL_set1_host(stream_->ssl(), server_name.c_str());
        }
        connected = stream_->connect();
    }

    bool connected = false;
    std::vector<int> interim; // the 1xx responses received
    std::string error() const { return stream_->error(); }

    http::response<http::string_body> send(http::request<http::string_body> request)
    {
        request.prepare_payload();
        http::write(*stream_, request);
        while (true) {
            http::response_parser<http::string_body> parser;
            parser.body_limit(64 << 20);
            http::read(*stream_, buffer_, parser);
            if (parser.get().result_int() / 100 != 1 || parser.get().result_int() == 101) // 101: switched
                return parser.release();
            interim.push_back(parser.get().result_int());
        }
    }

    // After an upgrade: bytes written as they are, and read back.
    void write_raw(const std::string& bytes) { boost::asio::write(*stream_, boost::asio::buffer(bytes)); }
    std::string read_raw(size_t size)
    {
        std::string bytes(size, '\0');
        boost::asio::read(*stream_, boost::asio::buffer(bytes));
        return bytes;
    }

    // Whether the proxy has closed the connection (a read finds its end).
    bool closed_by_proxy()
    {
        char byte;
        boost::system::error_code ec;
        stream_->read_some(boost::asio::buffer(&byte, 1), ec);
        return ec.failed();
    }

private:
    egress::SslCtxPtr ctx_;
    std::optional<TlsStream> stream_;
    boost::beast::flat_buffer buffer_;
};

inline http::request<http::string_body> request(http::verb method, const std::string& target,
                                                 const std::string& host = "api.example.org")
{
    http::request<http::string_body> request{method, target, 11};
    request.set(http::field::host, host);
    return request;
}

// A WebSocket upgrade request (the key is RFC 6455's example: the proxy does not check it).
inline http::request<http::string_body> websocket_upgrade(const std::string& target)
{
    auto upgrade = request(http::verb::get, target);
    upgrade.set(http::field::connection, "Upgrade");
    upgrade.set(http::field::upgrade, "websocket");
    upgrade.set(http::field::sec_websocket_version, "13");
    upgrade.set(http::field::sec_websocket_key, "dGhlIHNhbXBsZSBub25jZQ==");
    return upgrade;
}

// The proxy for a container whose policy allows rules, between clients and
// one TestUpstream, names admitted by a stand-in for the DNS gate; audit: the policy's mode is audit.
struct ProxyBench {
    explicit ProxyBench(const std::vector<std::string>& rules, std::set<std::string> admitted_names,
                        bool trust_upstream = true, bool audit = false)
        : admitted(std::move(admitted_names))
    {
        ::signal(SIGPIPE, SIG_IGN); // as the proxy's host does: a closed peer is an error, not a death
        std::string trust = dir.path + "/upstream-ca.pem";
        auto& trusted_ca = trust_upstream ? upstream_ca : *container_ca;
        files::write_file_atomic(trust, trusted_ca.cert_pem(), 0644);
        policy::Policy policy;
        policy::parse_http_rules(nlohmann::json(rules), "policy.allowed_http", policy);
        egress::ContainerContext context{"bench", 1, policy.allowed_http, container_ca, trust};
        context.audit = audit;
        proxy.emplace(std::move(context));
        connection.original = {AF_INET, {127, 0, 0, 1}, 443};
        connection.admitted = [this](const std::string& name) { return admitted.count(name) != 0; };
        connection.connect_upstream = [this] { return connect_to(upstream.port); };
        connection.record = [this](const egress::HttpRecord& record) {
            std::lock_guard lock(mutex);
            records.push_back(record);
        };
    }
    ~ProxyBench()
    {
        for (auto& thread : serving)
            thread.join();
    }

    // A client connection served by the proxy; trusting: the CA the client trusts (the container's by default).
    std::unique_ptr<TestClient> client(const std::string& server_name, X509* trusting = nullptr)
    {
        int pair[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
        UniqueFd proxy_end(pair[1]);
        serving.emplace_back([this, fd = pair[0]]() mutable { proxy->serve(UniqueFd(fd), connection); });
        return std::make_unique<TestClient>(std::move(proxy_end), trusting ? trusting : container_ca->certificate(),
                                            server_name);
    }

    // Waits for the proxy to finish with the last client (after it has gone).
    void finish_last_client()
    {
        serving.back().join();
        serving.pop_back();
    }

    std::vector<egress::HttpRecord> taken_records()
    {
        std::lock_guard lock(mutex);
        return std::exchange(records, {});
    }

    static UniqueFd connect_to(uint16_t port)
    {
        UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_in addr{AF_INET, htons(port), {htonl(INADDR_LOOPBACK)}, {}};
        check(::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), "connecting upstream");
        return fd;
    }

    TempDir dir;
    egress::CertificateAuthority upstream_ca = egress::CertificateAuthority::generate("test upstream CA");
    std::shared_ptr<egress::CertificateAuthority> container_ca =
        std::make_shared<egress::CertificateAuthority>(egress::CertificateAuthority::generate("Cerberus egress bench"));
    TestUpstream upstream{upstream_ca, "api.example.org"};
    std::set<std::string> admitted;
    std::optional<egress::Proxy> proxy;
    egress::Connection connection;
    std::mutex mutex;
    std::vector<egress::HttpRecord> records;
    std::vector<std::thread> serving;
};

} // namespace cerberus::test
