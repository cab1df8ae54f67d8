// SPDX-License-Identifier: Apache-2.0
// Compiles a policy to the BPF map entries of one container, keyed by its
// cgroup id. Pure: unit tests drive it without a kernel; the BPF
// backends write the result into the pinned maps.
#pragma once

#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::policy {

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

// The compile steps of rule lists (rule_lists.hpp) beyond their paths: the
// networks of allowed_hosts (CERB_HAS_NAMES when it names hosts), the mask of
// forbidden_caps. Called only for a list the policy has.
void compile_host_rules(const Policy& policy, CompiledPolicy& out);
void compile_forbidden_caps(const Policy& policy, CompiledPolicy& out);

// Keys the entries by another cgroup: create compiles before its cgroup exists.
void assign_cgroup(CompiledPolicy& compiled, uint64_t cgroup_id);

} // namespace cerberus::policy
