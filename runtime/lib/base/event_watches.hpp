// SPDX-License-Identifier: Apache-2.0
// The fds a daemon's event loop waits on (the DNS gate's, the command
// broker's): one epoll set, each fd under a key of its own that its events
// bring back, with what the daemon keeps for it (Watch: which container,
// which call, and the fd as watch.fd). Key 0 is the daemon's control socket
// (daemon::Life listens on it), never a watch's.
#pragma once

#include "base/error.hpp"
#include "base/fd.hpp"

#include <sys/epoll.h>

#include <cstdint>
#include <map>
#include <optional>

namespace cerberus::daemon {

template <typename Watch>
class EventWatches {
public:
    static constexpr uint64_t control_key = 0;

    // The epoll set; throws when the kernel gives none.
    void open()
    {
        epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
        if (!epoll_)
            throw_errno("epoll_create1");
    }
    int epoll_fd() const { return epoll_.get(); }

    // Waits for events on watch.fd; returns the watch's key.
    uint64_t add(const Watch& watch, uint32_t events)
    {
        uint64_t key = next_key_++;
        epoll_event event{.events = events, .data = {.u64 = key}};
        check(epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, watch.fd, &event), "epoll_ctl");
        watches_.emplace(key, watch);
        return key;
    }

    // Waits for other events on the watch's fd.
    void change(uint64_t key, uint32_t events)
    {
        if (auto it = watches_.find(key); it != watches_.end()) {
            epoll_event event{.events = events, .data = {.u64 = key}};
            epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, it->second.fd, &event);
        }
    }

    // Stops waiting on the watch's fd (before it is closed); a no-op for a key removed already, or 0.
    void remove(uint64_t key)
    {
        if (auto it = watches_.find(key); it != watches_.end()) {
            epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second.fd, nullptr);
            watches_.erase(it);
        }
    }

    // Hands an event to on_control (the control socket's) or to on_watch with a copy of its watch (handling it
    // may remove it); drops an event whose watch an earlier event of the same wait removed.
    template <typename OnControl, typename OnWatch>
    void route(const epoll_event& event, OnControl on_control, OnWatch on_watch) const
    {
        if (event.data.u64 == control_key)
            return on_control();
        if (auto it = watches_.find(event.data.u64); it != watches_.end()) {
            Watch watch = it->second;
            on_watch(watch, event.events);
        }
    }

private:
    UniqueFd epoll_;
    std::map<uint64_t, Watch> watches_;
    uint64_t next_key_ = control_key + 1;
};

} // namespace cerberus::daemon
