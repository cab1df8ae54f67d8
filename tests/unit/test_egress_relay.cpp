// SPDX-License-Identifier: Apache-2.0
// The HTTP/1.1 relay (egress/http_relay.hpp) between two TLS connections over socketpairs: bodies of several
// parts (Content-Length and chunked, scrubbed across a part's end) arriving whole, and a small message's header
// and body in one TLS record.
#include "egress/certificate_authority.hpp"
#include "egress/http_relay.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>

#include <cstdio>
#include <future>
#include <optional>
#include <string>
#include <thread>

using namespace cerberus;
using namespace cerberus::egress;

namespace {

// Two TLS ends of a socketpair, handshaken, neither reading ahead: a read takes one record at most.
struct TlsPair {
    TlsPair()
    {
        int ends[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
        static auto ca = CertificateAuthority::generate("test CA");
        auto leaf = ca.leaf_for("allowed.example");
        REQUIRE(SSL_CTX_use_certificate(server_ctx.get(), leaf->certificate.get()) == 1);
        REQUIRE(SSL_CTX_use_PrivateKey(server_ctx.get(), leaf->key.get()) == 1);
        server.emplace(server_ctx.get(), UniqueFd(ends[0]));
        client.emplace(client_ctx.get(), UniqueFd(ends[1]));
        bool accepted = false;
        std::thread handshake([&] { accepted = server->accept(); });
        bool connected = client->connect();
        handshake.join();
        REQUIRE(connected);
        REQUIRE(accepted);
    }

    SslCtxPtr server_ctx{SSL_CTX_new(TLS_server_method())};
    SslCtxPtr client_ctx{SSL_CTX_new(TLS_client_method())};
    std::optional<TlsStream> server;
    std::optional<TlsStream> client;
};

std::string pattern(size_t n)
{
    std::string body(n, '\0');
    for (size_t i = 0; i < n; ++i)
        body[i] = static_cast<char>('a' + i % 26);
    return body;
}

// Writes all of bytes to stream; whether they went.
bool write_all(TlsStream& stream, const std::string& bytes)
{
    boost::system::error_code ec;
    boost::asio::write(stream, boost::asio::buffer(bytes), ec);
    return !ec;
}

// The response the relay's output carries, read whole by a client of its own.
http::response<http::string_body> read_response(TlsStream& stream)
{
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(stream, buffer, response);
    return response;
}

// The relay of the response the server side of input writes, from the client side of input to the server side
// of output.
RelayEnd relay_response(TlsPair& input, TlsPair& output, SecretScrub* scrub = nullptr)
{
    boost::beast::flat_buffer buffer;
    ResponseParser parser;
    limit(parser);
    http::read_header(*input.client, buffer, parser);
    return relay(*output.server, *input.client, buffer, parser, false, scrub);
}

} // namespace

TEST_CASE("egress relay: bodies of several parts arrive whole, framed by Content-Length or chunked, scrubbed")
{
    const std::string secret = "s3cr3t-t0k3n";
    const size_t part = 64 * 1024; // the relay's buffer
    // The secret straddles the second and third parts.
    std::string body = pattern(5 * part / 2);
    body.replace(2 * part - 5, secret.size(), secret);
    std::string masked = body;
    masked.replace(2 * part - 5, secret.size(), std::string(secret.size(), '*'));
    for (bool chunked : {false, true}) {
        CAPTURE(chunked);
        TlsPair input;
        TlsPair output;
        SecretScrub scrub(secret);
        std::thread server([&] {
            if (!chunked) {
                write_all(*input.server,
                          "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
                return;
            }
            std::string framed = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
            for (size_t at = 0; at < body.size(); at += 10000) {
                std::string part = body.substr(at, 10000);
                char size[16];
                std::snprintf(size, sizeof size, "%zx\r\n", part.size());
                framed += size + part + "\r\n";
            }
            write_all(*input.server, framed + "0\r\n\r\n");
        });
        auto relayed = std::async(std::launch::async, [&] { return relay_response(input, output, &scrub); });
        auto response = read_response(*output.client);
        server.join();
        CHECK(relayed.get() == RelayEnd::done);
        CHECK(response.chunked() == chunked);
        CHECK(response.body().size() == masked.size());
        CHECK(response.body() == masked);
        // The control: without the scrub the secret would have passed.
        CHECK(body.find(secret) != std::string::npos);
    }
}

// A small response costs the agent one read: its header and body come in one TLS record.
TEST_CASE("egress relay: a small message's header and body go out in one TLS record")
{
    TlsPair input;
    TlsPair output;
    std::thread server([&] {
        // As Python's http.server writes: the header, then the body, apart.
        write_all(*input.server, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
        write_all(*input.server, "hello");
    });
    server.join(); // both in hand before the relay reads the header
    auto relayed = std::async(std::launch::async, [&] { return relay_response(input, output); });
    char got[256];
    size_t n = 0;
    REQUIRE(SSL_read_ex(output.client->ssl(), got, sizeof got, &n) == 1); // one record
    std::string record(got, n);
    CHECK(relayed.get() == RelayEnd::done);
    CHECK(record.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
    CHECK(record.size() >= 5);
    CHECK(record.substr(record.size() - 9) == "\r\n\r\nhello");
}
