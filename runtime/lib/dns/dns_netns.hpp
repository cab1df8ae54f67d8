// SPDX-License-Identifier: Apache-2.0
// The DNS gate's reach into a container's network namespace: found from the
// cgroup id alone (the cgroup's directory by its handle, a process listed in
// it, that process's namespace), and sockets opened there by a short-lived
// thread that enters it, so the gate's own thread never leaves its namespace.
#pragma once

#include "base/fd.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace cerberus::dns {

// The network namespace of a process of the cgroup; throws ESRCH when the
// cgroup is gone or empty. cgroup2 is the unified hierarchy's mount point.
UniqueFd netns_of_cgroup(const std::string& cgroup2, uint64_t cgroup_id);

// True while the cgroup exists.
bool cgroup_exists(const std::string& cgroup2, uint64_t cgroup_id);

// Runs make in a thread that has entered netns; rethrows what it throws.
void in_netns(int netns_fd, const std::function<void()>& make);

} // namespace cerberus::dns
