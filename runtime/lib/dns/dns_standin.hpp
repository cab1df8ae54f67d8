// SPDX-License-Identifier: Apache-2.0
// Stand-ins for what the dns-kernel branch brings (the merge deletes this
// file and dns_standin.cpp): policy::host_name_matches and has_host_names
// (policy.hpp) and the layout of CERB_MAP_NAMES (kernel/pinned_maps.hpp).
#pragma once

#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <string>

namespace cerberus::policy {
bool host_name_matches(const std::string& pattern, const std::string& name);
} // namespace cerberus::policy

namespace cerberus::kernel {
static_assert(sizeof(cerb_name_key) == 24);
static_assert(sizeof(cerb_name_value) == 16 + 4 * CERB_MAX_PORT_RANGES);
inline constexpr MapLayout names_map{CERB_NAME(CERB_MAP_NAMES), sizeof(cerb_name_key), sizeof(cerb_name_value)};
} // namespace cerberus::kernel

namespace cerberus::policy {
// True when the policy names hosts (the container's DNS goes through the gate).
bool has_host_names(const Policy& policy);
} // namespace cerberus::policy
