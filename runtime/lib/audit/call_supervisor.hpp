// SPDX-License-Identifier: Apache-2.0
// The audit collector's part in audit mode under the landlock backend: the
// seccomp listeners of container processes (backend_landlock's audit filter
// holds the calls of the policy's rules), whose calls it reads, hands on to be
// judged and recorded, and lets through, whatever the verdict.
#pragma once

#include "base/fd.hpp"
#include "kernel/pinned_maps.hpp"

#include <sys/epoll.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace cerberus::audit {

class CallSupervisor {
public:
    // on_call: a held call of the container of cgroup_id, its task still
    // waiting in it, to be judged and recorded before it runs.
    using OnCall = std::function<void(uint64_t cgroup_id, const cerb_call_event& call)>;
    CallSupervisor(int epoll_fd, OnCall on_call) : epoll_fd_(epoll_fd), on_call_(std::move(on_call)) {}

    // "supervise <cgroup id>": the socket a container process will send its
    // listener on, once it has installed its filter, just before it execs.
    // "ok", or what went wrong.
    std::string supervise(uint64_t cgroup_id, UniqueFd socket);

    // Handles the epoll event when it is one of the supervisor's fds (their
    // tags have a kind in the upper 32 bits); false when it is not.
    bool on_ready(const epoll_event& event);

private:
    struct Supervised {
        uint64_t cgroup_id;
        UniqueFd fd;
    };
    void take_listener(int socket_fd);
    void judge_notification(int listener_fd);

    int epoll_fd_;
    OnCall on_call_;
    std::map<int, Supervised> handovers_, listeners_; // by fd
};

} // namespace cerberus::audit
