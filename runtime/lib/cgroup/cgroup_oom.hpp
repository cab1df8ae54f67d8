// SPDX-License-Identifier: Apache-2.0
// OOM kills in a container's cgroup, as a pollable fd for `events`: an
// eventfd registered on memory.oom_control (v1), or an inotify watch on
// memory.events (v2).
#pragma once

#include "base/fd.hpp"
#include "cgroup/cgroup.hpp"

#include <cstdint>
#include <string>

namespace cerberus::cgroups {

class OomWatcher {
public:
    // Throws when the cgroup has no memory controller to watch.
    explicit OomWatcher(const Cgroup& cgroup);

    // Readable when something happened; then call take().
    int fd() const { return notify_.get(); }

    // The OOM kills since the last call.
    uint64_t take();

private:
    UniqueFd notify_;
    std::string v1_dir_;      // v1: the memory cgroup
    UniqueFd oom_control_;    // v1: stays open while the eventfd is registered
    std::string events_path_; // v2: memory.events, read for oom_kill
    uint64_t kills_seen_ = 0;
};

} // namespace cerberus::cgroups
