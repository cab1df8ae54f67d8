// SPDX-License-Identifier: Apache-2.0
// A container's transient scope unit under the systemd cgroup driver: planned
// from the spec before anything is made, then started with the container's
// init in it.
#pragma once

#include "cgroup/systemd_bus.hpp"
#include "cgroup/systemd_path.hpp"
#include "cgroup/systemd_properties.hpp"

#include <sys/types.h>

namespace cerberus::cgroups::systemd {

struct ScopePlan {
    ScopePath path;
    std::vector<UnitProperty> properties; // the scope's, the resources', the devices'; PIDs are added at start
    spec::Resources files;                // what cgroup files carry (Cgroup::adopt)
};

// Parses linux.cgroupsPath, translates the resources and checks the values left
// for cgroup files, all before the host is touched. device_rules: the spec's,
// then the runtime's defaults.
ScopePlan plan_scope(const std::string& cgroups_path, const std::string& container_id,
                     const spec::Resources* resources, const std::vector<spec::DeviceRule>& device_rules);

// Starts the scope with pid in it, waits for systemd to finish, and checks that
// the process is in the cgroup the plan names (the one the policy keys on). The
// guard stops the unit again unless released.
UnitGuard start_scope(Bus& bus, const ScopePlan& plan, pid_t pid);

} // namespace cerberus::cgroups::systemd
