// SPDX-License-Identifier: Apache-2.0
#include "audit/call_supervisor.hpp"

#include "base/error.hpp"
#include "base/unix_socket.hpp"
#include "kernel/call_observer.hpp"
#include "seccomp/seccomp.hpp"

#include <linux/audit.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include <spdlog/spdlog.h>

#include <cstring>
#include <optional>

namespace cerberus::audit {
namespace {

// epoll tags: kind << 32 | fd. The collector's own tags are small numbers (kind 0).
constexpr uint64_t handover_kind = 1, listener_kind = 2; // a socket a listener will come on; a listener

uint64_t tag(uint64_t kind, int fd)
{
    return kind << 32 | static_cast<uint32_t>(fd);
}

} // namespace

std::string CallSupervisor::supervise(uint64_t cgroup_id, UniqueFd socket)
{
    int fd = socket.get();
    epoll_event ev{.events = EPOLLIN, .data = {.u64 = tag(handover_kind, fd)}};
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0)
        return "epoll_ctl: " + errno_text(errno);
    handovers_[fd] = Supervised{cgroup_id, std::move(socket)};
    return "ok";
}

void CallSupervisor::take_listener(int socket_fd)
{
    auto handover = handovers_.extract(socket_fd);
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, socket_fd, nullptr);
    char buf[32];
    UniqueFd listener;
    if (unix_socket::receive_with_fd(socket_fd, buf, sizeof(buf), MSG_DONTWAIT, listener) <= 0 || !listener)
        return; // the process died before it sent it
    int fd = listener.get();
    epoll_event ev{.events = EPOLLIN, .data = {.u64 = tag(listener_kind, fd)}};
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) {
        spdlog::error("supervising cgroup {}: epoll_ctl: {}", handover.mapped().cgroup_id, std::strerror(errno));
        return; // the process, not told "ok", fails before it execs
    }
    listeners_[fd] = Supervised{handover.mapped().cgroup_id, std::move(listener)};
    send(socket_fd, "ok", 2, MSG_NOSIGNAL);
}

// A held call: handed on while its task still waits in it (a name read from
// its memory before that was checked is the call's), then let through.
void CallSupervisor::judge_notification(int listener_fd)
{
    auto it = listeners_.find(listener_fd);
    if (it == listeners_.end())
        return;
    uint64_t cgroup_id = it->second.cgroup_id;
    std::optional<seccomp_notif> notification;
    try {
        notification = seccomp::receive_notification(listener_fd);
    } catch (const Error& e) {
        spdlog::warn("cgroup {}: {}", cgroup_id, e.what());
    }
    if (!notification)
        return;
    try {
        if (notification->data.arch == AUDIT_ARCH_X86_64) { // the calls' table is x86-64's
            cerb_call_event call = kernel::call_of_notification(*notification);
            call.cgroup_id = cgroup_id;
            timespec now{};
            clock_gettime(CLOCK_BOOTTIME, &now); // the programs' clock
            call.time_ns = static_cast<uint64_t>(now.tv_sec) * 1000000000 + static_cast<uint64_t>(now.tv_nsec);
            struct stat task {};
            if (stat(("/proc/" + std::to_string(notification->pid)).c_str(), &task) == 0) {
                call.uid = task.st_uid;
                call.gid = task.st_gid;
            }
            if (seccomp::notification_valid(listener_fd, notification->id))
                on_call_(cgroup_id, call);
        }
    } catch (const Error& e) {
        spdlog::warn("cgroup {}: {}", cgroup_id, e.what());
    }
    try {
        seccomp::let_through(listener_fd, notification->id);
    } catch (const Error& e) {
        spdlog::warn("cgroup {}: {}", cgroup_id, e.what());
    }
}

bool CallSupervisor::on_ready(const epoll_event& event)
{
    uint64_t kind = event.data.u64 >> 32;
    int fd = static_cast<int>(event.data.u64 & 0xffffffff);
    if (kind == handover_kind) {
        take_listener(fd);
    } else if (kind == listener_kind) {
        if (event.events & EPOLLIN) {
            judge_notification(fd);
        } else if (event.events & (EPOLLHUP | EPOLLERR)) { // every task of the filter is gone
            epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
            listeners_.erase(fd);
        }
    } else {
        return false;
    }
    return true;
}

} // namespace cerberus::audit
