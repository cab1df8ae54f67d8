// SPDX-License-Identifier: Apache-2.0
// Starts a child (fork semantics: returns 0 in it) already in a container's
// cgroup2 directory when the kernel can (clone3 CLONE_INTO_CGROUP, Linux
// 5.7): moving a process there afterwards through cgroup.procs takes a write
// lock over every thread group on the host.
#pragma once

#include "cgroup/cgroup.hpp"

#include <cstdint>
#include <sys/types.h>

namespace cerberus {

struct ClonedChild {
    pid_t pid;
    // in_unified when born in the cgroup2 directory; the caller still
    // adds it to the v1 hierarchies (Cgroup::add_process).
    cgroups::Cgroup::Placed placed;
};

// flags: CLONE_NEW* namespace flags. On kernels without CLONE_INTO_CGROUP,
// and without a cgroup (systemd puts the child in its scope afterwards), the
// child is cloned where the caller is (placed = nowhere). Throws when neither
// clone works.
ClonedChild clone_into_cgroup(uint64_t flags, const cgroups::Cgroup* cgroup);

} // namespace cerberus
