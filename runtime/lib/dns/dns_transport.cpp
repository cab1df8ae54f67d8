// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_transport.hpp"

#include "base/error.hpp"
#include "kernel/pinned_maps.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace cerberus::dns {

Endpoint endpoint_of(const sockaddr_storage& addr)
{
    Endpoint endpoint;
    if (addr.ss_family == AF_INET) {
        const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
        endpoint.family = AF_INET;
        std::memcpy(endpoint.addr.data(), &in.sin_addr, 4);
        endpoint.port = ntohs(in.sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
        endpoint.family = AF_INET6;
        std::memcpy(endpoint.addr.data(), &in6.sin6_addr, 16);
        endpoint.port = ntohs(in6.sin6_port);
    }
    return endpoint;
}

socklen_t sockaddr_of(const Endpoint& endpoint, sockaddr_storage& addr)
{
    addr = {};
    if (endpoint.family == AF_INET) {
        auto& in = reinterpret_cast<sockaddr_in&>(addr);
        in.sin_family = AF_INET;
        in.sin_port = htons(endpoint.port);
        std::memcpy(&in.sin_addr, endpoint.addr.data(), 4);
        return sizeof(sockaddr_in);
    }
    auto& in6 = reinterpret_cast<sockaddr_in6&>(addr);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(endpoint.port);
    std::memcpy(&in6.sin6_addr, endpoint.addr.data(), 16);
    return sizeof(sockaddr_in6);
}

namespace {

// Tries of a port the kernel picks before giving up: one is taken on another address or protocol only when the
// namespace's ephemeral ports are nearly all in use.
constexpr int port_tries = 16;

// The gate's socket of that family and type on the gate's address (ip4, host byte order, for IPv4; ::1 for IPv6)
// and port (0: one the kernel picks); an empty fd when the address is not there (a namespace without ::1, a
// kernel without IPv6).
UniqueFd gate_socket(int family, int type, uint16_t port, uint32_t ip4 = CERB_DNS_GATE_IP4)
{
    UniqueFd fd(socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd && family == AF_INET6 && errno == EAFNOSUPPORT)
        return fd;
    if (!fd)
        throw_errno("socket");
    int on = 1;
    // Only TCP: a restarted gate binds the port again past its old connections in TIME_WAIT, and a listening
    // socket keeps every other bind off its port. A UDP socket would share the port with anyone asking for it.
    if (type == SOCK_STREAM)
        setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    Endpoint endpoint{family, {}, port};
    if (family == AF_INET) {
        uint32_t gate = htonl(ip4);
        std::memcpy(endpoint.addr.data(), &gate, 4);
    } else {
        setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
        endpoint.addr[15] = 1;
    }
    sockaddr_storage addr{};
    socklen_t len = sockaddr_of(endpoint, addr);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) < 0) {
        if (family == AF_INET6 && errno == EADDRNOTAVAIL)
            return UniqueFd();
        int bind_errno = errno;
        char text[INET_ADDRSTRLEN] = "";
        inet_ntop(AF_INET, endpoint.addr.data(), text, sizeof(text));
        std::string where = family == AF_INET ? text : "[::1]";
        throw Error("binding " + where + ":" + std::to_string(port) + ": " + errno_text(bind_errno), bind_errno);
    }
    if (type == SOCK_STREAM)
        check(listen(fd.get(), 64), "listen");
    return fd;
}

uint16_t bound_port(int fd)
{
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    check(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), "getsockname of the gate's socket");
    return endpoint_of(addr).port;
}

GateSockets bind_gate_sockets(uint16_t port, bool with_proxy)
{
    GateSockets sockets;
    sockets.udp4 = gate_socket(AF_INET, SOCK_DGRAM, port);
    sockets.port = port != 0 ? port : bound_port(sockets.udp4.get());
    sockets.tcp4 = gate_socket(AF_INET, SOCK_STREAM, sockets.port);
    sockets.udp6 = gate_socket(AF_INET6, SOCK_DGRAM, sockets.port);
    if (sockets.udp6)
        sockets.tcp6 = gate_socket(AF_INET6, SOCK_STREAM, sockets.port);
    if (with_proxy)
        sockets.proxy = gate_socket(AF_INET, SOCK_STREAM, sockets.port, CERB_EGRESS_PROXY_IP4);
    return sockets;
}

} // namespace

GateSockets gate_sockets(uint16_t port, const std::set<uint16_t>& reserved, bool with_proxy)
{
    if (port != 0)
        return bind_gate_sockets(port, with_proxy);
    std::vector<GateSockets> passed_over; // held until one fits, so that the kernel picks another port
    for (int tried = 1; tried <= port_tries; ++tried) {
        try {
            GateSockets sockets = bind_gate_sockets(0, with_proxy);
            if (!reserved.contains(sockets.port))
                return sockets;
            passed_over.push_back(std::move(sockets));
        } catch (const Error& e) {
            if (e.errnum() != EADDRINUSE)
                throw;
        }
    }
    throw Error("no port free on 127.53.0.1 and [::1], TCP and UDP, for the DNS gate after " +
                    std::to_string(port_tries) + " tries",
                EADDRINUSE);
}

std::vector<uint8_t> frame(std::span<const uint8_t> message)
{
    std::vector<uint8_t> framed{static_cast<uint8_t>(message.size() >> 8), static_cast<uint8_t>(message.size())};
    framed.insert(framed.end(), message.begin(), message.end());
    return framed;
}

bool FrameReader::append(std::span<const uint8_t> bytes)
{
    if (buffer_.size() + bytes.size() > limit_)
        return false;
    buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
    return true;
}

std::optional<std::vector<uint8_t>> FrameReader::next()
{
    if (buffer_.size() < 2)
        return std::nullopt;
    size_t len = (size_t{buffer_[0]} << 8) | buffer_[1];
    if (buffer_.size() < 2 + len)
        return std::nullopt;
    std::vector<uint8_t> message(buffer_.begin() + 2, buffer_.begin() + 2 + static_cast<long>(len));
    buffer_.erase(buffer_.begin(), buffer_.begin() + 2 + static_cast<long>(len));
    return message;
}

StreamRead read_stream(int fd, FrameReader& reader)
{
    uint8_t buf[4096];
    ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return StreamRead::again;
    if (n <= 0 || !reader.append(std::span(buf, static_cast<size_t>(n))))
        return StreamRead::closed;
    return StreamRead::more;
}

} // namespace cerberus::dns
