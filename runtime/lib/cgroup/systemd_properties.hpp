// SPDX-License-Identifier: Apache-2.0
// spec::Resources as systemd unit properties, for the resources systemd owns on
// cgroup v2, and the rest as cgroup files (cgroup_translate.hpp). Pure: every
// value is checked here, before the runtime talks to systemd.
#pragma once

#include "oci/spec.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cerberus::cgroups::systemd {

// The D-Bus types systemd takes for the properties used here: b, t, s, ay, au, a(ss).
using DeviceAllowList = std::vector<std::pair<std::string, std::string>>; // (device, access)
using PropertyValue =
    std::variant<bool, uint64_t, std::string, std::vector<uint8_t>, std::vector<uint32_t>, DeviceAllowList>;

struct UnitProperty {
    std::string name;
    PropertyValue value;

    bool operator==(const UnitProperty&) const = default;
};

// systemd's "infinity" for limits (USEC_INFINITY, CGROUP_LIMIT_MAX).
inline constexpr uint64_t infinity = UINT64_MAX;

struct Translation {
    std::vector<UnitProperty> properties; // set on the unit, in this order
    spec::Resources files;                // what is left for cgroup files (device rules included)
};

// The resources as properties where systemd owns the setting (MemoryMax, MemoryLow,
// MemorySwapMax, MemoryHigh, MemoryMin, CPUWeight, CPUQuotaPerSecUSec,
// CPUQuotaPeriodUSec, TasksMax, AllowedCPUs, AllowedMemoryNodes, IOWeight, and the
// matching linux.resources.unified keys) and the rest left for cgroup files.
// Device rules stay in `files` (cerberus's own device program enforces them
// exactly); see device_properties for systemd's view of them. Throws EINVAL,
// naming the field, for a value systemd or the cgroup files would refuse.
Translation translate_resources(const spec::Resources& resources);

// What a new scope always gets besides the resources: the slice, delegation,
// no default dependencies, and accounting, which enables the controllers.
std::vector<UnitProperty> scope_properties(const std::string& slice, const std::string& description);

// DevicePolicy and DeviceAllow that say what the rules (the spec's, then the
// runtime's defaults) allow, when systemd can say it exactly: allow rules after
// the last deny-all, without a "*:N" rule. Empty when it cannot; systemd's
// policy then stays "auto" and only cerberus's program filters.
std::vector<UnitProperty> device_properties(const std::vector<spec::DeviceRule>& rules);

// "0-3,8" as the little-endian bit mask AllowedCPUs takes. field names the
// setting in errors.
std::vector<uint8_t> cpu_list_mask(const std::string& list, const std::string& field);

// CPUQuotaPerSecUSec for a quota per period, rounded up to the 10 ms systemd keeps
// (it stores a percentage); infinity for no quota. period 0 means the kernel's 100 ms.
uint64_t quota_per_second(int64_t quota, uint64_t period);

} // namespace cerberus::cgroups::systemd
