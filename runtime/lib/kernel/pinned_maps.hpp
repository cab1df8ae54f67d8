// SPDX-License-Identifier: Apache-2.0
// The runtime's side of the contract with the BPF programs
// (bpf/cerberus_policy.h): every map they share is pinned under CERB_PIN_DIR
// and opened here and only here, with its key and value sizes checked, and
// every size of the shared header is asserted here.
#pragma once

#include "base/fd.hpp"
#include "cerberus_layout.h"
#include "cerberus_policy.h"

#include <cstdint>
#include <optional>
#include <string>

// This build's pin directory, named by its layout identity: a container's
// state records it, so that a delete by a later build removes from the maps
// the container's entries are in.
#define CERB_PIN_DIR CERB_PIN_ROOT "/" CERB_LAYOUT_ID

namespace cerberus::kernel {

static_assert(sizeof(cerb_policy) == 32);
static_assert(sizeof(cerb_event_acct) == 16);
static_assert(sizeof(cerb_net4_key) == 16);
static_assert(sizeof(cerb_net6_key) == 28);
static_assert(sizeof(cerb_net_value) == 4 + 4 * CERB_MAX_PORT_RANGES);
static_assert(sizeof(cerb_path_key) == 24);
static_assert(sizeof(cerb_path_value) == 8);
static_assert(sizeof(cerb_config) == 24);
static_assert(sizeof(cerb_event) == 344);
static_assert(sizeof(cerb_setup_task) == 8);
static_assert(sizeof(cerb_name_key) == 24);
static_assert(sizeof(cerb_name_value) == 80);
static_assert(sizeof(cerb_proxy_origin) == 24);
static_assert(sizeof(cerb_proxy_key) == 8);
static_assert(sizeof(cerb_dns_peer) == 24);
static_assert(sizeof(cerb_dns_gate) == 8);

struct MapLayout {
    const char* name;
    uint32_t key_size;
    uint32_t value_size;
};

inline constexpr MapLayout policies_map{CERB_NAME(CERB_MAP_POLICIES), sizeof(uint64_t), sizeof(cerb_policy)};
inline constexpr MapLayout net4_map{CERB_NAME(CERB_MAP_NET4), sizeof(cerb_net4_key), sizeof(cerb_net_value)};
inline constexpr MapLayout net6_map{CERB_NAME(CERB_MAP_NET6), sizeof(cerb_net6_key), sizeof(cerb_net_value)};
inline constexpr MapLayout paths_map{CERB_NAME(CERB_MAP_PATHS), sizeof(cerb_path_key), sizeof(cerb_path_value)};
inline constexpr MapLayout config_map{CERB_NAME(CERB_MAP_CONFIG), sizeof(uint32_t), sizeof(cerb_config)};
inline constexpr MapLayout event_acct_map{CERB_NAME(CERB_MAP_EVENT_ACCT), sizeof(uint64_t), sizeof(cerb_event_acct)};
inline constexpr MapLayout events_map{CERB_NAME(CERB_MAP_EVENTS), 0, 0}; // a ring buffer
inline constexpr MapLayout setup_tasks_map{CERB_NAME(CERB_MAP_SETUP_TASKS), sizeof(int), sizeof(cerb_setup_task)}; // keyed by a pidfd
inline constexpr MapLayout names_map{CERB_NAME(CERB_MAP_NAMES), sizeof(cerb_name_key), sizeof(cerb_name_value)};
inline constexpr MapLayout dns_peers_map{CERB_NAME(CERB_MAP_DNS_PEERS), sizeof(uint64_t), sizeof(cerb_dns_peer)}; // socket cookie
inline constexpr MapLayout dns_gates_map{CERB_NAME(CERB_MAP_DNS_GATES), sizeof(uint64_t), sizeof(cerb_dns_gate)}; // cgroup id
inline constexpr MapLayout proxy_dials_map{CERB_NAME(CERB_MAP_PROXY_DIALS), sizeof(uint64_t), sizeof(cerb_proxy_origin)}; // socket cookie
inline constexpr MapLayout proxy_origins_map{CERB_NAME(CERB_MAP_PROXY_ORIGINS), sizeof(cerb_proxy_key), sizeof(cerb_proxy_origin)};
inline constexpr MapLayout sock_owner_map{CERB_PIN_SOCK_OWNER, sizeof(uint64_t), sizeof(uint64_t)};
inline constexpr MapLayout shared_maps[] = {policies_map,    net4_map,  net6_map,     paths_map, config_map,
                                            event_acct_map,  events_map, setup_tasks_map, names_map, dns_peers_map,
                                            dns_gates_map, proxy_dials_map, proxy_origins_map};

// The pinned map; throws ENOENT when it is not pinned and EPROTO when its
// layout is not this build's (another cerberus version pinned it).
UniqueFd open_map(const MapLayout& map, const std::string& pin_dir = CERB_PIN_DIR);

// nullopt when the map is not pinned.
std::optional<UniqueFd> open_map_if_pinned(const MapLayout& map, const std::string& pin_dir = CERB_PIN_DIR);

// Checks every shared map already pinned: a program object reusing them
// (libbpf's pinning by name) gets this build's layouts or a clear refusal.
void check_pinned_layouts(const std::string& pin_dir = CERB_PIN_DIR);

} // namespace cerberus::kernel
