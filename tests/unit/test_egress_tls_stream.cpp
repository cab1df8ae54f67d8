// SPDX-License-Identifier: Apache-2.0
#include "egress/certificate_authority.hpp"
#include "egress/egress_tls.hpp"
#include "egress/tls_stream.hpp"

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>
#include <string>
#include <thread>

using namespace cerberus;
using namespace cerberus::egress;

namespace {

int nodelay_of(int fd)
{
    int on = 0;
    socklen_t len = sizeof on;
    REQUIRE(::getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, &len) == 0);
    return on;
}

} // namespace

// Without it, a response's body waits for the client's delayed ACK of its header: 40 ms a request.
TEST_CASE("egress TLS stream: Nagle's algorithm is off on its TCP socket")
{
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(fd);
    CHECK(nodelay_of(fd.get()) == 0);
    auto ctx = make_server_tls();
    TlsStream stream(ctx.get(), std::move(fd));
    CHECK(nodelay_of(SSL_get_fd(stream.ssl())) != 0);
}

// A header reaches the peer as one record, not a record per line that it would take one by one, and with it
// what of its body fits.
TEST_CASE("egress TLS stream: buffers written together go out as one TLS record, filled")
{
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    auto ca = CertificateAuthority::generate("test CA");
    auto leaf = ca.leaf_for("allowed.example");
    SslCtxPtr server_ctx(SSL_CTX_new(TLS_server_method()));
    REQUIRE(SSL_CTX_use_certificate(server_ctx.get(), leaf->certificate.get()) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey(server_ctx.get(), leaf->key.get()) == 1);
    SslCtxPtr client_ctx(SSL_CTX_new(TLS_client_method())); // no read-ahead: one record a read at most
    TlsStream server(server_ctx.get(), UniqueFd(pair[0]));
    TlsStream client(client_ctx.get(), UniqueFd(pair[1]));
    bool accepted = false;
    std::thread handshake([&] { accepted = server.accept(); });
    REQUIRE(client.connect());
    handshake.join();
    REQUIRE(accepted);

    std::array<boost::asio::const_buffer, 3> lines{boost::asio::buffer("GET / HTTP/1.1\r\n", 16),
                                                   boost::asio::buffer("Host: a\r\n", 9),
                                                   boost::asio::buffer("\r\n", 2)};
    boost::system::error_code ec;
    CHECK(server.write_some(lines, ec) == 27);
    CHECK(!ec);
    char got[64];
    size_t n = 0;
    REQUIRE(SSL_read_ex(client.ssl(), got, sizeof got, &n) == 1);
    CHECK(std::string(got, n) == "GET / HTTP/1.1\r\nHost: a\r\n\r\n");

    // A header and a large body after it: the record is filled with the body's start, not sent with the header
    // alone.
    const std::string body(20000, 'b');
    std::array<boost::asio::const_buffer, 2> message{boost::asio::buffer("HTTP/1.1 200 OK\r\n\r\n", 19),
                                                     boost::asio::buffer(body)};
    CHECK(server.write_some(message, ec) == 16 * 1024);
    CHECK(!ec);
    std::string record(16 * 1024 + 1, '\0');
    REQUIRE(SSL_read_ex(client.ssl(), record.data(), record.size(), &n) == 1);
    record.resize(n);
    CHECK(record == "HTTP/1.1 200 OK\r\n\r\n" + body.substr(0, 16 * 1024 - 19));
}
