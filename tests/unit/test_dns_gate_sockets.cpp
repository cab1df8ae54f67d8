// SPDX-License-Identifier: Apache-2.0
// The DNS gate's sockets for one container (dns_transport.hpp): bound in the
// test's own network namespace on 127.53.0.1 and [::1], nothing sent.
#include "base/error.hpp"
#include "base/files.hpp"
#include "dns/dns_transport.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace cerberus;
using namespace cerberus::dns;

namespace {

uint16_t port_of(int fd)
{
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    return endpoint_of(addr).port;
}

// errno of binding 127.53.0.1:port with SO_REUSEADDR, as a process that wants to share it would; 0 when it binds.
int bind_error_sharing(int type, uint16_t port)
{
    UniqueFd fd(socket(AF_INET, type | SOCK_CLOEXEC, 0));
    REQUIRE(fd);
    int on = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(CERB_DNS_GATE_IP4);
    return bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 ? 0 : errno;
}

} // namespace

TEST_CASE("dns gate sockets: one port on every address and protocol, its own per container, shared with nobody")
{
    GateSockets first = gate_sockets(0, {}, false);
    REQUIRE(first.udp4);
    REQUIRE(first.tcp4);
    CHECK(first.port != 0);
    CHECK(port_of(first.udp4.get()) == first.port);
    CHECK(port_of(first.tcp4.get()) == first.port);
    if (first.udp6) { // a namespace with ::1
        CHECK(port_of(first.udp6.get()) == first.port);
        REQUIRE(first.tcp6);
        CHECK(port_of(first.tcp6.get()) == first.port);
    }
    GateSockets second = gate_sockets(0, {}, false);
    CHECK(second.port != first.port);

    CHECK(bind_error_sharing(SOCK_DGRAM, first.port) == EADDRINUSE);
    CHECK(bind_error_sharing(SOCK_STREAM, first.port) == EADDRINUSE);
    try {
        gate_sockets(first.port, {}, false);
        FAIL("a recorded port held by another container's sockets was bound");
    } catch (const Error& e) {
        CHECK(e.errnum() == EADDRINUSE);
        CHECK(std::string(e.what()).find("127.53.0.1:" + std::to_string(first.port)) != std::string::npos);
    }

    uint16_t port = first.port;
    first = {};
    GateSockets again = gate_sockets(port, {}, false); // a restarted gate, on the recorded port
    CHECK(again.port == port);
    CHECK(port_of(again.tcp4.get()) == port);
}

TEST_CASE("dns gate sockets: a port picked is never one reserved for another container")
{
    // In a network namespace of its own whose ephemeral range is two ports, so the kernel would pick the
    // reserved one half the time.
    std::string skipped, failed;
    std::vector<uint16_t> picked;
    std::thread worker([&] { // doctest's checks stay on the test's thread
        if (unshare(CLONE_NEWNET) != 0) {
            skipped = "unshare(CLONE_NEWNET): " + errno_text(errno);
            return;
        }
        try {
            UniqueFd fd(check(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), "socket"));
            ifreq lo{};
            std::strcpy(lo.ifr_name, "lo");
            lo.ifr_flags = IFF_UP;
            check(ioctl(fd.get(), SIOCSIFFLAGS, &lo), "bringing lo up");
            files::write_file("/proc/sys/net/ipv4/ip_local_port_range", "40000 40001");
            for (int i = 0; i < 8; ++i)
                picked.push_back(gate_sockets(0, {40000}, false).port);
        } catch (const Error& e) {
            failed = e.what();
        }
    });
    worker.join();
    if (!skipped.empty()) {
        MESSAGE("skipped: " << skipped);
        return;
    }
    REQUIRE_MESSAGE(failed.empty(), failed);
    CHECK(picked.size() == 8);
    for (uint16_t port : picked)
        CHECK(port == 40001);
}
