// SPDX-License-Identifier: Apache-2.0
// The map keys one container's policy added. create keeps them in the
// container's state dir, so that delete removes exactly those entries, in
// time that does not grow with the number of other policed containers.
#pragma once

#include "policy/policy_compile.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::policy {

struct PolicyKeys {
    uint64_t cgroup_id = 0;
    std::vector<cerb_net4_key> net4;
    std::vector<cerb_net6_key> net6;
    std::vector<cerb_path_key> paths;
};

PolicyKeys keys_of(const CompiledPolicy& compiled);

// A versioned binary form: cgroup id, the three counts, the raw keys.
std::string encode_keys(const PolicyKeys& keys);

// nullopt when the data is not exactly what encode_keys wrote for this
// cgroup (truncated by a crash, another version, another container's).
std::optional<PolicyKeys> decode_keys(std::string_view data, uint64_t cgroup_id);

} // namespace cerberus::policy
