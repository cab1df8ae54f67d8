// SPDX-License-Identifier: Apache-2.0
#include "cgroup/cgroup_oom.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup_files.hpp"

#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <sstream>

namespace cerberus::cgroups {
namespace {

uint64_t oom_kills(const std::string& events_path)
{
    std::istringstream events(read_control_if_exists(events_path).value_or(""));
    std::string key;
    uint64_t value = 0;
    while (events >> key >> value)
        if (key == "oom_kill")
            return value;
    return 0;
}

} // namespace

OomWatcher::OomWatcher(const Cgroup& cgroup)
{
    if (auto memory_root = cgroup.mounts().v1_mount("memory")) {
        v1_dir_ = *memory_root + cgroup.path();
        std::string control = v1_dir_ + "/memory.oom_control";
        oom_control_ = UniqueFd(::open(control.c_str(), O_RDONLY | O_CLOEXEC));
        if (!oom_control_)
            throw_errno("open " + control);
        notify_ = UniqueFd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        if (!notify_)
            throw_errno("eventfd");
        write_control(v1_dir_ + "/cgroup.event_control",
                      std::to_string(notify_.get()) + " " + std::to_string(oom_control_.get()));
        return;
    }
    events_path_ = cgroup.unified_dir() + "/memory.events";
    notify_ = UniqueFd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (!notify_)
        throw_errno("inotify_init1");
    if (::inotify_add_watch(notify_.get(), events_path_.c_str(), IN_MODIFY) < 0)
        throw_errno("inotify_add_watch " + events_path_);
    kills_seen_ = oom_kills(events_path_);
}

uint64_t OomWatcher::take()
{
    if (!v1_dir_.empty()) {
        // Also signalled when the cgroup goes away: that is no OOM kill.
        uint64_t count = 0;
        if (::read(notify_.get(), &count, sizeof count) != sizeof count)
            return 0;
        return control_exists(v1_dir_ + "/cgroup.event_control") ? count : 0;
    }
    char buffer[4096];
    while (::read(notify_.get(), buffer, sizeof buffer) > 0) {
    }
    uint64_t kills = oom_kills(events_path_);
    uint64_t fresh = kills > kills_seen_ ? kills - kills_seen_ : 0;
    kills_seen_ = kills;
    return fresh;
}

} // namespace cerberus::cgroups
