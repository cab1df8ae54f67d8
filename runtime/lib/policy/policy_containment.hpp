// SPDX-License-Identifier: Apache-2.0
// What keeps a policed agent inside its container, whatever backend enforces
// the policy (docs/threat-model.md, issue 30 class 1). The policy is bound to
// the container's cgroup: the LSM programs find it through the task's cgroup,
// and the cgroup socket programs (landlock's network rules, every backend's
// egress program) are attached there. So the agent must not leave that
// cgroup's subtree: every cgroup view it can get is rooted at its cgroup (a
// cgroup namespace of its own, added when the spec has none), and no mount
// shows it the host's hierarchies.
#pragma once

#include "cgroup/cgroup_mounts.hpp"
#include "oci/spec.hpp"
#include "policy/policy.hpp"

#include <optional>
#include <string>

namespace cerberus::policy {

// Gives the spec a cgroup namespace of its own when it has none. Throws
// EINVAL, naming the field, for a cgroup namespace joined by path, for a
// bind mount showing a host cgroup hierarchy (source on one, or above one
// with rbind) unless read-only with CAP_SYS_ADMIN out of the agent's reach
// (a remount could make it writable), and for a writable cgroup mount in a
// shared pid namespace where cgroup2 lacks nsdelegate. host: the runtime's
// cgroup mounts.
void keep_in_cgroup(const Policy& policy, spec::Spec& spec, const cgroups::Mounts& host);

// The index of the first spec mount of a cgroup file system the agent may
// write to (no "ro" option), or nullopt.
std::optional<size_t> writable_cgroup_mount(const spec::Spec& spec);

// True when the container shares a pid namespace: none of its own in the spec
// (the runtime's) or one joined by path (another container's).
bool shares_pid_namespace(const spec::Spec& spec);

// True when the container is in the host's network namespace: none of its own
// in the spec, or the runtime's or the host init's joined by path.
bool shares_host_network(const spec::Spec& spec);

} // namespace cerberus::policy
