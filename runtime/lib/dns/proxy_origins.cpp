// SPDX-License-Identifier: Apache-2.0
#include "dns/proxy_origins.hpp"

#include "kernel/pinned_maps.hpp"

#include <bpf/bpf.h>
#include <sys/socket.h>

#include <cstring>

namespace cerberus::dns {

ProxyOrigins::ProxyOrigins() : map_(kernel::open_map(kernel::proxy_origins_map)) {}

std::optional<Endpoint> ProxyOrigins::take(uint16_t listener_port, uint16_t client_port)
{
    cerb_proxy_key key{.listener_port = listener_port, .client_port = client_port, .pad = 0};
    cerb_proxy_origin origin{};
    if (bpf_map_lookup_and_delete_elem(map_.get(), &key, &origin) < 0)
        return std::nullopt;
    Endpoint endpoint;
    endpoint.family = origin.family;
    endpoint.port = origin.port;
    std::memcpy(endpoint.addr.data(), origin.addr, origin.family == AF_INET ? 4 : 16);
    return endpoint;
}

} // namespace cerberus::dns
