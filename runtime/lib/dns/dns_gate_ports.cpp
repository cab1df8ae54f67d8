// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_gate_ports.hpp"

#include "base/error.hpp"
#include "kernel/pinned_maps.hpp"

#include <bpf/bpf.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <string>

namespace cerberus::dns {

GatePorts::GatePorts() : map_(kernel::open_map(kernel::dns_gates_map)) {}

std::optional<uint16_t> GatePorts::recorded(uint64_t cgroup_id) const
{
    cerb_dns_gate gate{};
    if (bpf_map_lookup_elem(map_.get(), &cgroup_id, &gate) < 0) {
        if (errno == ENOENT)
            return std::nullopt;
        throw_errno("reading the DNS gate's port of cgroup " + std::to_string(cgroup_id) + " in " +
                    kernel::dns_gates_map.name);
    }
    return gate.port != 0 ? std::optional<uint16_t>(gate.port) : std::nullopt;
}

std::set<uint16_t> GatePorts::all() const
{
    std::set<uint16_t> ports;
    uint64_t key = 0;
    for (const void* previous = nullptr; bpf_map_get_next_key(map_.get(), previous, &key) == 0; previous = &key)
        if (auto port = recorded(key))
            ports.insert(*port);
    return ports;
}

void GatePorts::record(uint64_t cgroup_id, uint16_t port)
{
    cerb_dns_gate gate{.port = port, .pad = 0, .pad2 = 0};
    check(bpf_map_update_elem(map_.get(), &cgroup_id, &gate, BPF_ANY),
          "recording the DNS gate's port " + std::to_string(port) + " of cgroup " + std::to_string(cgroup_id) +
              " in " + kernel::dns_gates_map.name);
}

void GatePorts::forget(uint64_t cgroup_id) noexcept
{
    if (bpf_map_delete_elem(map_.get(), &cgroup_id) < 0 && errno != ENOENT)
        spdlog::warn("removing the DNS gate's port of cgroup {} from {}: {}", cgroup_id, kernel::dns_gates_map.name,
                     errno_text(errno));
}

} // namespace cerberus::dns
