// SPDX-License-Identifier: Apache-2.0
#include "egress/egress_tls.hpp"
#include "egress/tls_stream.hpp"

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

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
