// SPDX-License-Identifier: Apache-2.0
// The collector's part of the kernel audit log: Landlock's denials, the
// domains they name, and the marker that makes a finish read up to now.
#include "audit/audit_format.hpp"
#include "audit/collector_daemon.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "kernel/audit_netlink.hpp"

#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

namespace cerberus::audit {

void Collector::subscribe_audit_log()
{
    try {
        cgroup2_ = cgroups::Mounts::detect().unified;
        audit_log_ = kernel::subscribe_audit_log();
        epoll_event ev{.events = EPOLLIN, .data = {.u64 = audit_log_ready}};
        check(epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, audit_log_.get(), &ev), "epoll_ctl");
    } catch (const Error& e) {
        audit_log_.reset();
        spdlog::warn("{}: Landlock's denials will not reach the trails", e.what());
    }
}

// True once marker (a message of read_audit_log_to_now) came back, or the
// kernel refused to send it.
bool Collector::read_audit_log(const std::string& marker)
{
    if (!audit_log_)
        return true;
    bool marked = false;
    try {
        for (const auto& message : kernel::read_audit_messages(audit_log_.get(), audit_lost_)) {
            if (message.type == kernel::netlink_error) {
                int err = 0;
                std::memcpy(&err, message.text.data(), std::min(message.text.size(), sizeof(err)));
                spdlog::warn("the kernel refused the collector's audit marker: {}", std::strerror(-err));
                marked = true;
            } else if (message.type == kernel::audit_marker_record) {
                marked = marked || (!marker.empty() && message.text.find(marker) != std::string::npos);
            } else if (auto allocated = landlock_.add(message.type, message.text)) {
                learn_domain(allocated->domain, allocated->creator);
            }
        }
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
        marked = true;
    }
    write_landlock(landlock_.take(Completion::ended));
    return marked;
}

// Landlock's denials reach the audit log through kauditd, a moment after the
// denial. A marker sent now comes back after every record queued before it:
// reading up to it reads all a finished container's denials, however few or
// many, without a fixed wait. With audit off no record is made, nor a marker.
void Collector::read_audit_log_to_now()
{
    if (kernel::AuditStatus audit = kernel::audit_status(); audit.known && audit.enabled == 0) {
        read_audit_log();
        return;
    }
    std::string marker = "op=cerberus-trail-sync collector=" + std::to_string(getpid()) +
                         " seq=" + std::to_string(++markers_sent_);
    try {
        kernel::send_audit_marker(audit_log_.get(), marker);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
        read_audit_log();
        return;
    }
    auto deadline = std::chrono::steady_clock::now() + marker_wait;
    while (!read_audit_log(marker)) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            spdlog::warn("the kernel audit log did not bring the collector's marker back within {} ms (dropped by an "
                         "audit rule or rate limit?): Landlock denials made just before a container's end may be "
                         "left out of its trail",
                         marker_wait.count());
            return;
        }
        pollfd pfd{audit_log_.get(), POLLIN, 0};
        poll(&pfd, 1, static_cast<int>(left.count()));
    }
}

// The cgroup v2 id of a process: the inode of its directory in the unified hierarchy.
std::optional<uint64_t> Collector::cgroup_of(int64_t pid) const
{
    std::string text;
    try {
        text = files::read_file("/proc/" + std::to_string(pid) + "/cgroup");
    } catch (const Error&) {
        return std::nullopt; // gone
    }
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
        at = end == std::string::npos ? text.size() : end + 1;
        if (line.rfind("0::", 0) != 0)
            continue;
        struct stat st {};
        if (stat((cgroup2_ + line.substr(3)).c_str(), &st) == 0)
            return static_cast<uint64_t>(st.st_ino);
    }
    return std::nullopt;
}

// The first denial of a domain comes with the record of who made it: a
// container's init (or the process `cerberus exec` started), in the
// container's cgroup while it lives.
void Collector::learn_domain(uint64_t domain, int64_t creator)
{
    if (auto cgroup_id = cgroup_of(creator))
        domains_[domain] = *cgroup_id;
}

void Collector::write_landlock(std::vector<LandlockEvent> events)
{
    for (const auto& event : events) {
        for (const auto& denial : event.denials) {
            auto domain = domains_.find(denial.domain);
            if (domain == domains_.end()) {
                ++unknown_domains_; // a domain not of ours, or made by a process gone before its first denial
                continue;
            }
            auto it = trails_.find(domain->second);
            if (it == trails_.end()) {
                reload_registry();
                it = trails_.find(domain->second);
            }
            if (it == trails_.end()) {
                ++unknown_;
                continue;
            }
            Trail& trail = it->second;
            trail.pending += dump_line(landlock_denial_json(event, denial, trail.id)) + "\n";
            write_pending(trail);
        }
    }
}

} // namespace cerberus::audit
