// SPDX-License-Identifier: Apache-2.0
// Where a connection the socket programs steered to the egress proxy was
// going: CERB_MAP_PROXY_ORIGINS, keyed by what the gate sees of the
// connection it accepts (its listener's port, the peer's port), written by
// the programs before the connection's first packet. Private to dns/.
#pragma once

#include "base/fd.hpp"
#include "dns/dns_gate_registry.hpp"

#include <cstdint>
#include <optional>

namespace cerberus::dns {

class ProxyOrigins {
public:
    ProxyOrigins(); // opens the pinned map; throws when it is not pinned

    // Taken out of the map; nullopt when the programs did not steer the
    // connection (a process that dialled the listener's address itself).
    std::optional<Endpoint> take(uint16_t listener_port, uint16_t client_port);

private:
    UniqueFd map_;
};

} // namespace cerberus::dns
