// SPDX-License-Identifier: Apache-2.0
// spec::Resources as control-file writes, for cgroup v2 and for v1. Pure:
// every value is checked here, before the runtime touches the host.
#pragma once

#include "oci/spec.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cerberus::cgroups {

// One group of resources; each lives in one hierarchy (on hybrid hosts a
// kind's v1 controller may be mounted, or the controller is on cgroup2).
enum class Kind { memory, cpu, cpuset, pids, io, hugetlb, devices, unified };

inline constexpr Kind all_kinds[] = {Kind::memory, Kind::cpu,     Kind::cpuset,  Kind::pids,
                                     Kind::io,     Kind::hugetlb, Kind::devices, Kind::unified};

// The v1 hierarchy holding kind's files ("blkio" for io), "" for unified.
const char* v1_controller(Kind kind);

struct ControlWrite {
    std::string file; // name inside the cgroup dir
    std::string value;
    bool only_if_exists = false; // the kernel may lack it (memory.memsw.*)

    bool operator==(const ControlWrite&) const = default;
};

// Devices are not files on v2 (see device_filter.hpp): empty for Kind::devices.
std::vector<ControlWrite> v2_writes(const spec::Resources& resources, Kind kind);

// What a v1 cgroup holds before the writes (a new one: the defaults). The
// kernel judges each write against the other files' values at that moment,
// so these order pairs of writes that must both go through.
struct CurrentLimits {
    uint64_t memory_limit = UINT64_MAX; // memory.limit_in_bytes
    uint64_t cpu_quota = UINT64_MAX;    // cpu.cfs_quota_us, UINT64_MAX for none
    uint64_t cpu_period = 100000;       // cpu.cfs_period_us
};

// device_rules: the spec's rules followed by the runtime's defaults.
std::vector<ControlWrite> v1_writes(const spec::Resources& resources, Kind kind,
                                    std::span<const spec::DeviceRule> device_rules, const CurrentLimits& current);

// The cgroup2 controller that owns a unified key ("memory.high" -> "memory"),
// "" for core files ("cgroup.freeze").
std::string controller_of_key(const std::string& key);

// cpu.shares [2, 262144] to cpu.weight [1, 10000], as runc and crun convert
// them: the default 1024 becomes the default 100.
uint64_t shares_to_weight(uint64_t shares);

// The spec's memory.swap is memory+swap; cgroup v2 limits swap alone: the
// swap.max value (-1 for no limit), or nothing to set. Throws EINVAL, naming
// linux.resources.memory.swap, when the pair makes no sense.
std::optional<int64_t> v2_swap_limit(int64_t swap, int64_t limit);

// blkio.weight [10, 1000] to io.weight [1, 10000].
uint64_t blkio_to_io_weight(uint64_t weight);

} // namespace cerberus::cgroups
