// SPDX-License-Identifier: Apache-2.0
#include "audit/audit_collector.hpp"

#include "audit/audit.hpp"
#include "audit/audit_format.hpp"
#include "audit/audit_registry.hpp"
#include "audit/event_drain.hpp"
#include "audit/landlock_records.hpp"
#include "base/daemon.hpp"
#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "kernel/audit_netlink.hpp"
#include "kernel/pinned_maps.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace cerberus::audit {
namespace {

constexpr size_t write_every = 64 * 1024;   // bytes of a trail kept before they are written
constexpr auto tick = std::chrono::seconds(1); // lost counts, fdatasync, registry, exit check
// How long the collector stays once no container is registered: a burst of
// short-lived policed containers (an eval harness, CI) then shares one
// collector instead of starting one per container.
constexpr auto idle_linger = std::chrono::seconds(10);
// How long finish waits for its marker to come back through the kernel audit
// log: a safety bound (an audit rule dropping the marker), not a wait that
// happens when the kernel delivers it.
constexpr auto marker_wait = std::chrono::milliseconds(1000);

// epoll tags
constexpr uint32_t ring_ready = 0, request_ready = 1, audit_log_ready = 2;

// One container's trail file, opened on first use.
struct Trail {
    std::string id;
    std::string path;
    UniqueFd fd;
    std::string pending;
    bool unsynced = false;
    bool audit_log = false; // RegistryEntry::audit_log
};

class Collector {
public:
    // False when another collector holds the lock.
    bool start();
    void run();

private:
    void write_event(const DrainedEvent& drained);
    void consume(const daemon::StillWorking& still_working = {});
    void write_pending(Trail& trail);
    void report_lost(uint64_t cgroup_id, Trail& trail);
    void sync_all();
    void reload_registry();
    void forget(uint64_t cgroup_id);
    void collect_garbage();
    void on_tick();
    void serve_request();
    std::string finish(uint64_t cgroup_id, const daemon::StillWorking& still_working);
    bool policy_present(uint64_t cgroup_id) const;
    void subscribe_audit_log();
    bool read_audit_log(const std::string& marker = "");
    void read_audit_log_to_now();
    void write_landlock(std::vector<LandlockEvent> events);
    std::optional<uint64_t> cgroup_of(int64_t pid) const;
    void learn_domain(uint64_t domain, int64_t creator);

    UniqueFd lock_, listener_, epoll_, policies_, acct_;
    std::optional<EventDrain> drain_;
    std::vector<DrainedEvent> taken_; // its capacity kept from one take to the next
    size_t next_taken_ = 0;           // the first of taken_ not written yet
    std::map<uint64_t, Trail> trails_;
    int64_t boot_to_wall_ = 0;
    bool reloaded_in_batch_ = false;
    uint64_t unknown_ = 0; // events of cgroups in no registry entry
    // Landlock's denials, from the kernel audit log.
    UniqueFd audit_log_;
    LandlockEvents landlock_;
    std::map<uint64_t, uint64_t> domains_; // Landlock domain id -> cgroup id of the process that made it
    std::string cgroup2_;
    uint64_t audit_lost_ = 0, unknown_domains_ = 0, markers_sent_ = 0;
};

bool Collector::start()
{
    files::make_dirs(registry_dir(), 0700);
    lock_ = daemon::open_lock(collector_daemon());
    if (!daemon::take_lock(collector_daemon(), lock_.get()))
        return false;
    policies_ = kernel::open_map(kernel::policies_map);
    acct_ = kernel::open_map(kernel::event_acct_map);
    drain_.emplace();
    epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_)
        throw_errno("epoll_create1");
    epoll_event ev{.events = EPOLLIN, .data = {.u32 = ring_ready}};
    check(epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, drain_->ready_fd(), &ev), "epoll_ctl");
    subscribe_audit_log(); // before the socket: create waits for the socket before the init runs
    listener_ = daemon::listen(collector_daemon(), epoll_.get(), {.u32 = request_ready});
    reload_registry();
    spdlog::info("audit collector {} started", getpid());
    return true;
}

// Landlock logs file and exec denials only to kernel audit. Without a
// subscription (no CAP_AUDIT_READ, no CONFIG_AUDIT) the BPF events still flow.
void Collector::subscribe_audit_log()
{
    try {
        cgroup2_ = cgroups::Mounts::detect().unified;
        audit_log_ = kernel::subscribe_audit_log();
        epoll_event ev{.events = EPOLLIN, .data = {.u32 = audit_log_ready}};
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
            } else if (auto record = parse_audit_record(message.type, message.text)) {
                if (auto allocated = landlock_.add(*record))
                    learn_domain(allocated->first, allocated->second);
            }
        }
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
        marked = true;
    }
    write_landlock(landlock_.take(false));
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

void Collector::write_event(const DrainedEvent& drained)
{
    const cerb_event& e = drained.event;
    auto it = trails_.find(e.cgroup_id);
    if (it == trails_.end() && !reloaded_in_batch_) {
        reloaded_in_batch_ = true;
        reload_registry();
        it = trails_.find(e.cgroup_id);
    }
    if (it == trails_.end()) {
        ++unknown_;
        return;
    }
    Trail& trail = it->second;
    trail.pending += dump_line(event_json(e, {trail.id, *drained.exe, boot_to_wall_}));
    trail.pending += '\n';
    if (trail.pending.size() >= write_every)
        write_pending(trail);
}

// Writes what the drain thread took from the ring buffer (event_drain.hpp),
// one take at a time. A burst's can take seconds: a client waiting for them
// (finish) hears every second that the collector is still at it; without
// one, a request that comes meanwhile stops the writing, the rest kept for
// the next call (the next tick at the latest), so that no client waits on
// another container's burst without a word.
void Collector::consume(const daemon::StillWorking& still_working)
{
    boot_to_wall_ = boot_to_wall_offset();
    reloaded_in_batch_ = false;
    if (next_taken_ == taken_.size()) {
        drain_->take(taken_);
        next_taken_ = 0;
    }
    auto told = std::chrono::steady_clock::now();
    while (next_taken_ < taken_.size()) {
        write_event(taken_[next_taken_++]);
        if (next_taken_ % 1024 != 0 || std::chrono::steady_clock::now() - told < std::chrono::seconds(1))
            continue;
        if (still_working) {
            still_working();
        } else {
            pollfd request{listener_.get(), POLLIN, 0};
            if (poll(&request, 1, 0) == 1)
                break;
        }
        told = std::chrono::steady_clock::now();
    }
    for (auto& [cgroup_id, trail] : trails_)
        write_pending(trail);
}

void Collector::write_pending(Trail& trail)
{
    if (trail.pending.empty())
        return;
    try {
        if (!trail.fd) {
            files::make_dirs(trail.path.substr(0, trail.path.find_last_of('/')), 0700);
            trail.fd.reset(open(trail.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
            if (!trail.fd)
                throw_errno("opening " + trail.path);
            check(fchmod(trail.fd.get(), 0600), "chmod " + trail.path);
        }
        for (size_t done = 0; done < trail.pending.size();)
            done += check(write(trail.fd.get(), trail.pending.data() + done, trail.pending.size() - done),
                          "writing " + trail.path);
        trail.unsynced = true;
    } catch (const Error& e) {
        spdlog::error("{}: {} bytes of events dropped", e.what(), trail.pending.size());
    }
    trail.pending.clear();
}

void Collector::report_lost(uint64_t cgroup_id, Trail& trail)
{
    cerb_policy policy{};
    if (bpf_map_lookup_elem(policies_.get(), &cgroup_id, &policy) < 0)
        return;
    cerb_event_acct acct = drain_->acct(cgroup_id);
    if (policy.events_lost <= acct.lost_reported)
        return;
    uint64_t count = policy.events_lost - acct.lost_reported;
    struct timespec ts {};
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wall = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    trail.pending += dump_line(lost_json(trail.id, wall, count, policy.events_lost)) + "\n";
    write_pending(trail);
    drain_->set_lost_reported(cgroup_id, policy.events_lost);
}

void Collector::sync_all()
{
    for (auto& [cgroup_id, trail] : trails_) {
        if (trail.unsynced && trail.fd)
            fdatasync(trail.fd.get());
        trail.unsynced = false;
    }
}

// The registry (audit_registry.hpp): create writes an entry, finish removes it.
void Collector::reload_registry()
{
    std::map<uint64_t, bool> seen;
    for (auto& entry : read_registry()) {
        seen[entry.cgroup_id] = true;
        if (!trails_.count(entry.cgroup_id))
            trails_[entry.cgroup_id] = Trail{entry.id, entry.trail, UniqueFd(), "", false, entry.audit_log};
    }
    for (auto it = trails_.begin(); it != trails_.end();) {
        if (seen.count(it->first)) {
            ++it;
            continue;
        }
        write_pending(it->second);
        it = trails_.erase(it);
    }
}

void Collector::forget(uint64_t cgroup_id)
{
    if (auto it = trails_.find(cgroup_id); it != trails_.end()) {
        write_pending(it->second);
        if (it->second.fd)
            fdatasync(it->second.fd.get());
        trails_.erase(it);
    }
    unlink(registry_entry_path(cgroup_id).c_str());
    drain_->forget(cgroup_id);
    for (auto it = domains_.begin(); it != domains_.end();)
        it = it->second == cgroup_id ? domains_.erase(it) : std::next(it);
}

bool Collector::policy_present(uint64_t cgroup_id) const
{
    cerb_policy policy{};
    return bpf_map_lookup_elem(policies_.get(), &cgroup_id, &policy) == 0;
}

// Containers whose policy went without a finish (a failed create, a delete
// that found no collector): their events are drained by now.
void Collector::collect_garbage()
{
    std::vector<uint64_t> gone;
    for (const auto& [cgroup_id, trail] : trails_)
        if (!policy_present(cgroup_id))
            gone.push_back(cgroup_id);
    uint64_t key = 0, next = 0;
    const uint64_t* previous = nullptr;
    while (bpf_map_get_next_key(acct_.get(), previous, &next) == 0) {
        if (!policy_present(next) && !trails_.count(next))
            gone.push_back(next);
        key = next;
        previous = &key;
    }
    for (uint64_t cgroup_id : gone)
        forget(cgroup_id);
}

void Collector::on_tick()
{
    reload_registry();
    consume();
    // Events still open from the last tick: where the kernel builds no
    // SYSCALL record it sends no end-of-event record either.
    write_landlock(landlock_.take_stale());
    for (auto& [cgroup_id, trail] : trails_)
        report_lost(cgroup_id, trail);
    sync_all();
    collect_garbage();
    if (unknown_) {
        spdlog::warn("{} events of cgroups no container registered were dropped", unknown_);
        unknown_ = 0;
    }
    if (unknown_domains_) {
        spdlog::info("{} Landlock denials of domains no registered container made were left alone", unknown_domains_);
        unknown_domains_ = 0;
    }
    if (audit_lost_) {
        spdlog::warn("the kernel audit log overflowed {} times: Landlock denials were lost", audit_lost_);
        audit_lost_ = 0;
    }
}

std::string Collector::finish(uint64_t cgroup_id, const daemon::StillWorking& still_working)
{
    consume(still_working); // what an earlier consume left
    bool all_taken;
    do { // every event the container sent is taken and written
        all_taken = drain_->drain_now();
        consume(still_working);
    } while (!all_taken);
    if (!trails_.count(cgroup_id))
        reload_registry();
    if (audit_log_) {
        auto it = trails_.find(cgroup_id);
        if (it == trails_.end() || it->second.audit_log)
            read_audit_log_to_now();
        else
            read_audit_log();
        write_landlock(landlock_.take(true));
    }
    if (auto it = trails_.find(cgroup_id); it != trails_.end())
        report_lost(cgroup_id, it->second);
    forget(cgroup_id);
    return "ok";
}

void Collector::serve_request()
{
    daemon::answer_request(listener_.get(), [&](const std::string& request,
                                                const daemon::StillWorking& still_working) -> std::string {
        if (request.rfind("finish ", 0) == 0)
            return finish(std::strtoull(request.c_str() + 7, nullptr, 10), still_working);
        if (request == "ping")
            return "ok"; // create, making sure a collector listens before the init runs
        return "unknown request";
    });
}

void Collector::run()
{
    daemon::Life life{collector_daemon(), lock_.get(), epoll_.get(), listener_, {.u32 = request_ready}, tick, idle_linger,
                      [&](const epoll_event& event) {
                          if (event.data.u32 == ring_ready)
                              consume();
                          else if (event.data.u32 == audit_log_ready)
                              read_audit_log();
                          else
                              serve_request();
                      },
                      [&] {
                          on_tick();
                          return !trails_.empty();
                      },
                      [&] {
                          reload_registry();
                          return !trails_.empty();
                      }};
    life.serve();
}

} // namespace

int run_collector()
{
    Collector collector;
    return daemon::run("audit collector", [&] { return collector.start(); }, [&] { collector.run(); });
}

} // namespace cerberus::audit
