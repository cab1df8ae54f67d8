// SPDX-License-Identifier: Apache-2.0
// Compiles a policy to the BPF map entries of one container, keyed by its
// cgroup id. Pure: unit tests drive it without a kernel; bpf_loader writes
// the result into the pinned maps.
#pragma once

#include "cerberus_policy.h"
#include "policy/policy.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::policy {

static_assert(sizeof(cerb_policy) == 24);
static_assert(sizeof(cerb_net4_key) == 16);
static_assert(sizeof(cerb_net6_key) == 28);
static_assert(sizeof(cerb_net_value) == 4 + 4 * CERB_MAX_PORT_RANGES);
static_assert(sizeof(cerb_path_key) == 24);
static_assert(sizeof(cerb_path_value) == 8);
static_assert(sizeof(cerb_config) == 16);
static_assert(sizeof(cerb_event) == 344);
static_assert(sizeof(cerb_setup_task) == 8);

// Each container's share of the maps all containers share, so that one
// policy cannot fill them and make every other create fail: a thirty-second
// of each (2,048 networks per address family, 4,096 paths).
inline constexpr size_t container_net_rules = CERB_MAX_NET_RULES / 32;
inline constexpr size_t container_path_rules = CERB_MAX_PATH_RULES / 32;

struct Net4Entry {
    cerb_net4_key key;
    cerb_net_value value;
};

struct Net6Entry {
    cerb_net6_key key;
    cerb_net_value value;
};

struct PathEntry {
    cerb_path_key key;
    cerb_path_value value;
};

struct CompiledPolicy {
    uint64_t cgroup_id = 0;
    cerb_policy policy{};
    std::vector<Net4Entry> net4;
    std::vector<Net6Entry> net6;
    std::vector<PathEntry> paths;
};

// The hash the BPF programs compute over a path prefix (FNV-1a, seeded).
uint64_t path_hash(std::string_view path, uint64_t seed);

// Host names must have been resolved (resolve_policy does it). Throws when a
// CIDR collects more port ranges than an entry holds, or when the policy needs
// more entries than one container's share (E2BIG, naming the limit).
CompiledPolicy compile_policy(const Policy& policy, uint64_t cgroup_id, uint64_t path_seed);

} // namespace cerberus::policy
