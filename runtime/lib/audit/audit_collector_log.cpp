// SPDX-License-Identifier: Apache-2.0
// The collector's part of the kernel audit log: Landlock's denials, the
// domains they name, and the marker that makes a finish read up to now.
#include "audit/audit_format.hpp"
#include "audit/collector_daemon.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "kernel/audit_netlink.hpp"

#include <linux/landlock.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "kernel/pinned_maps.hpp"

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
            // The call observer sees the file system's refusals too: the record pairs with its call (one
            // line for both), or waits a moment for it.
            bool observed_kind = observer_ && denial.blockers.rfind("fs.", 0) == 0;
            if (observed_kind && pair_with_call(it->first, event.pid, denial.path, denial.blockers)) {
                ++paired_;
                continue;
            }
            if (observed_kind && pair_with_held_call(it->first, event.pid, denial.path, denial.blockers)) {
                ++paired_;
                continue;
            }
            auto line = landlock_denial_json(event, denial, trail.id);
            if (observed_kind) {
                held_records_.push_back({it->first, event.pid, denial.path, denial.blockers, std::move(line),
                                         std::chrono::steady_clock::now() + pair_record_wait});
                continue;
            }
            append(trail, std::move(line));
            write_pending(trail);
        }
    }
}

namespace {

// How well a Landlock record (pid, path, blockers) matches a refused call of the same container: 2 the
// same object, 1 the directory the call made or removed a name in (Landlock names the directory), 0 not.
int match(const ObservedRefusal& call, int64_t pid, const std::string& path, const std::string& blockers)
{
    if (pid > 0 && call.pid != pid)
        return 0;
    if (call.op == CERB_OP_MOUNT)
        return blockers.find("fs.change_topology") != std::string::npos ? 2 : 0;
    if (path == call.target)
        return 2;
    bool names_in_dir = blockers.find("fs.make_") != std::string::npos ||
                        blockers.find("fs.remove_") != std::string::npos ||
                        blockers.find("fs.refer") != std::string::npos;
    if (names_in_dir && !path.empty() && call.target.rfind(path == "/" ? path : path + "/", 0) == 0)
        return 1;
    return path.empty() ? 1 : 0;
}

// The best-scoring entry of a pairing queue (score 0: no match), or its end.
template <typename Queue, typename Score>
auto best_match(Queue& queue, Score score_of)
{
    auto best = queue.end();
    int best_score = 0;
    for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (int score = score_of(*it); score > best_score)
            best = it, best_score = score;
    }
    return best;
}

} // namespace

// A call the observer saw Landlock refuse, paired with a record already come: the record's blockers.
std::optional<std::string> Collector::pair_with_record(uint64_t cgroup_id, const cerb_event& e)
{
    ObservedRefusal call{cgroup_id, e.pid, e.op, std::string(e.path, e.path_len), {}};
    auto best = best_match(held_records_, [&](const HeldRecord& record) {
        return record.cgroup_id == cgroup_id ? match(call, record.pid, record.path, record.blockers) : 0;
    });
    if (best == held_records_.end())
        return std::nullopt;
    std::string blockers = best->blockers;
    held_records_.erase(best);
    ++paired_;
    return blockers;
}

// A record of Landlock's whose call the observer already sent (and the collector wrote): true, and the
// call is paired.
bool Collector::pair_with_call(uint64_t cgroup_id, int64_t pid, const std::string& path, const std::string& blockers)
{
    auto keep_from = std::chrono::steady_clock::now() - pair_call_keep;
    while (!observed_.empty() && observed_.front().seen < keep_from)
        observed_.pop_front();
    auto best = best_match(observed_, [&](const ObservedRefusal& observed) {
        return observed.cgroup_id == cgroup_id ? match(observed, pid, path, blockers) : 0;
    });
    if (best == observed_.end())
        return false;
    observed_.erase(best);
    return true;
}

// A record of Landlock's whose call waits for it (audit on): the call's line is written with the
// record's blockers.
bool Collector::pair_with_held_call(uint64_t cgroup_id, int64_t pid, const std::string& path,
                                    const std::string& blockers)
{
    auto best = best_match(held_calls_, [&](const HeldCall& held) {
        return held.call.cgroup_id == cgroup_id ? match(held.call, pid, path, blockers) : 0;
    });
    if (best == held_calls_.end())
        return false;
    best->line["blockers"] = blockers;
    write_line(cgroup_id, best->line);
    held_calls_.erase(best);
    return true;
}

void Collector::write_line(uint64_t cgroup_id, const nlohmann::ordered_json& line)
{
    if (auto trail = trails_.find(cgroup_id); trail != trails_.end()) {
        append(trail->second, line);
        write_pending(trail->second);
    }
}

// Whether Landlock's records are to come: kernel audit on, Landlock ABI 7. Asked every tick: a call
// held in vain (audit just switched off) waits pair_call_wait, one not held (just switched on) is
// written without the record's blockers; either way its denial is one line.
void Collector::refresh_audit_state()
{
    static const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (!audit_log_ || abi < 7) {
        landlock_logs_ = false;
        return;
    }
    kernel::AuditStatus audit = kernel::audit_status();
    landlock_logs_ = audit.known && audit.enabled != 0;
}

// Calls and records of Landlock's that nothing paired: those held long enough (or, with all, every one of
// the container's) are written alone; a call is then kept for a late record.
void Collector::write_held_records(bool all, uint64_t cgroup_id)
{
    auto now = std::chrono::steady_clock::now();
    for (auto it = held_calls_.begin(); it != held_calls_.end();) {
        if (all ? it->call.cgroup_id != cgroup_id : it->until > now) {
            ++it;
            continue;
        }
        write_line(it->call.cgroup_id, it->line);
        observed_.push_back(it->call);
        it = held_calls_.erase(it);
    }
    for (auto it = held_records_.begin(); it != held_records_.end();) {
        if (all ? it->cgroup_id != cgroup_id : it->until > now) {
            ++it;
            continue;
        }
        write_line(it->cgroup_id, it->line);
        it = held_records_.erase(it);
    }
    auto keep_from = now - pair_call_keep;
    while (!observed_.empty() && observed_.front().seen < keep_from)
        observed_.pop_front();
}

} // namespace cerberus::audit
