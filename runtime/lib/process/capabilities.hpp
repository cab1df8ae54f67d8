// SPDX-License-Identifier: Apache-2.0
// Capability sets: names resolved and checked in the parent, applied by the
// container's init around its change of identity (see user.hpp):
//   drop_bounding_set -> user::apply_user -> apply_capabilities
#pragma once

#include "oci/spec.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cerberus::capabilities {

// Bit n set = capability n.
struct CapabilitySets {
    uint64_t bounding = 0, effective = 0, inheritable = 0, permitted = 0, ambient = 0;
    unsigned last_cap = 0; // highest capability the running kernel knows
};

// Parent. Unknown names throw (`process.capabilities.bounding: unknown
// capability "CAP_FOO"`); capabilities beyond last_cap are dropped with a
// debug log; ambient capabilities the kernel would refuse to raise (not both
// permitted and inheritable) are dropped with a warning; an effective
// capability that is not permitted throws. An empty spec::Capabilities (the
// config has none) gives empty sets: the process runs without capabilities.
CapabilitySets parse_capabilities(const spec::Capabilities& config, unsigned last_cap);
// Same, with last_cap from /proc/sys/kernel/cap_last_cap.
CapabilitySets parse_capabilities(const spec::Capabilities& config);

unsigned kernel_last_cap();

// The one capability table: libcap-ng's names as config.json
// spells them. "CAP_CHOWN" for 0; empty for a number without a name.
std::string_view capability_name(unsigned cap);
// 0 for "CAP_CHOWN" (exactly so spelled); none for a name not in the table.
std::optional<unsigned> capability_number(std::string_view name);
// The name, or "capability 41" for a number without one.
std::string describe(unsigned cap);

// Child, before user::apply_user: dropping needs CAP_SETPCAP, which the
// change of uid takes away.
void drop_bounding_set(const CapabilitySets& sets);

// Child, after user::apply_user: sets effective, permitted and inheritable
// exactly, then replaces the ambient set.
void apply_capabilities(const CapabilitySets& sets);

} // namespace cerberus::capabilities
