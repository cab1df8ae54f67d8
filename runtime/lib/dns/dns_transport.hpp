// SPDX-License-Identifier: Apache-2.0
// The DNS gate's sockets and the wire around messages: addresses as the
// socket calls take them, the gate's own listening sockets in a container's
// network namespace, and DNS over TCP's framing (RFC 1035 4.2.2: each message
// after its length in two bytes), written once for queries and answers,
// clients and nameservers.
#pragma once

#include "base/fd.hpp"
#include "dns/dns_gate_registry.hpp"

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <vector>

namespace cerberus::dns {

inline constexpr size_t max_message = 65535;

Endpoint endpoint_of(const sockaddr_storage& addr);
socklen_t sockaddr_of(const Endpoint& endpoint, sockaddr_storage& addr);

// The gate's sockets for one container, in the network namespace the
// calling thread is in, non-blocking: UDP and TCP (listening) on
// 127.53.0.1 and [::1], all on one port; the IPv6 ones empty when ::1 is not
// there (a namespace without it, a kernel without IPv6). With the proxy: the
// egress proxy's listener on 127.53.0.2, the same port.
struct GateSockets {
    UniqueFd udp4, tcp4, udp6, tcp6, proxy;
    uint16_t port = 0;
};

// On port (a restarted gate's recorded one: throws when it cannot be bound),
// or with 0 on a port the kernel picks that is free on every address and
// protocol and not reserved (recorded for another container, whose gate may
// not have bound it again yet). Each container of a namespace has its own:
// no socket is shared.
GateSockets gate_sockets(uint16_t port, const std::set<uint16_t>& reserved, bool with_proxy);

// The message with its length in front.
std::vector<uint8_t> frame(std::span<const uint8_t> message);

// The messages of one TCP stream, from bytes read in any pieces.
class FrameReader {
public:
    // limit: the bytes it holds at most, a message and its length at least.
    explicit FrameReader(size_t limit) : limit_(limit) {}

    // What the stream's next read brought; false when the stream went past
    // the limit (a peer to drop).
    bool append(std::span<const uint8_t> bytes);

    // The next whole message, taken out; nullopt until one is complete.
    std::optional<std::vector<uint8_t>> next();

private:
    size_t limit_;
    std::vector<uint8_t> buffer_;
};

enum class StreamRead { more, again, closed };

// One non-blocking read of the stream into reader: more (bytes came), again
// (nothing to read now), closed (end of stream, an error, or past the limit).
StreamRead read_stream(int fd, FrameReader& reader);

} // namespace cerberus::dns
