// SPDX-License-Identifier: Apache-2.0
// The landlock backend, for kernels without the BPF LSM: files and exec by
// Landlock (applied by every container process to itself just before exec),
// paths the access rules cannot deny by the runtime's own mounts, network by
// cgroup socket programs on the container's cgroup v2 directory, and the rest
// by a seccomp filter stacked on the spec's. See docs/policy.md for what each
// rule kind becomes, and what it cannot.
#pragma once

#include "policy/enforcement.hpp"

namespace cerberus::policy {

const Backend& landlock_backend();

// The seccomp rules the landlock backend adds to a container under this policy
// (memfd_sysctl: vm.memfd_noexec does the memfd part instead; shared_pids: the
// container shares a pid namespace with processes outside it). Pure.
spec::Seccomp landlock_seccomp(const Policy& policy, bool memfd_sysctl, bool shared_pids);

// The mounts it asks of the init. Pure.
std::vector<mounts::PathMount> landlock_path_mounts(const Policy& policy, bool memfd_sysctl);

} // namespace cerberus::policy
