// SPDX-License-Identifier: Apache-2.0
#include "audit/collector_daemon.hpp"

#include "audit/audit.hpp"
#include "audit/audit_format.hpp"
#include "audit/audit_registry.hpp"
#include "audit/call_supervisor.hpp"
#include "audit/event_drain.hpp"
#include "audit/landlock_records.hpp"
#include "base/daemon.hpp"
#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "kernel/audit_netlink.hpp"
#include "kernel/call_observer.hpp"
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
    supervisor_.emplace(epoll_.get(), [this](uint64_t cgroup_id, const cerb_call_event& call) {
        judge_held_call(cgroup_id, call);
    });
    epoll_event ev{.events = EPOLLIN, .data = {.u64 = ring_ready}};
    check(epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, drain_->ready_fd(), &ev), "epoll_ctl");
    subscribe_audit_log(); // before the socket: create waits for the socket before the init runs
    refresh_audit_state();
    listener_ = daemon::listen(collector_daemon(), epoll_.get(), {.u64 = request_ready});
    reload_registry();
    spdlog::info("audit collector {} started", getpid());
    return true;
}

// Landlock logs file and exec denials only to kernel audit. Without a
// subscription (no CAP_AUDIT_READ, no CONFIG_AUDIT) the BPF events still flow.
// Counts nothing: the drain did (event_drain.hpp). Finds the event's container's trail.
Trail* Collector::trail_of(uint64_t cgroup_id)
{
    auto it = trails_.find(cgroup_id);
    if (it == trails_.end() && !reloaded_in_batch_) {
        reloaded_in_batch_ = true;
        reload_registry();
        it = trails_.find(cgroup_id);
    }
    if (it == trails_.end()) {
        ++unknown_;
        return nullptr;
    }
    return &it->second;
}

// The two records the programs send (bpf/cerberus_policy.h): an event, or a call the observer saw fail.
void Collector::write_drained(const DrainedEvent& drained)
{
    if (drained.call) {
        handle_call(*drained.call, *drained.exe);
    } else if (Trail* trail = trail_of(drained.event.cgroup_id)) {
        write_event(*trail, drained.event, *drained.exe);
    }
}

void Collector::handle_call(const cerb_call_event& call, const std::string& exe)
{
    Trail* trail = trail_of(call.cgroup_id);
    if (!trail)
        return;
    UniqueFd own;
    auto e = judge_(call, trail->policy, root_for(*trail, call.pid, own), CERB_VERDICT_DENIED);
    if (!e) {
        ++not_refusals_;
        return;
    }
    // A refusal of Landlock's may have a record in the kernel audit log too: one line for both, with the
    // record's blockers (from a record come first, or held for it while audit is on); else kept for a
    // record to find.
    std::string blockers;
    if (audit_log_ && refused_by_landlock(call, *e)) {
        ObservedRefusal seen{call.cgroup_id, e->pid, e->op, std::string(e->path, e->path_len),
                             std::chrono::steady_clock::now()};
        if (auto paired = pair_with_record(call.cgroup_id, *e)) {
            blockers = *paired;
        } else if (landlock_logs_) {
            held_calls_.push_back({seen, event_json(*e, {trail->id, exe, boot_to_wall_}),
                                   seen.seen + pair_call_wait});
            return;
        } else {
            observed_.push_back(seen);
        }
    }
    write_event(*trail, *e, exe, blockers);
}

void Collector::write_event(Trail& trail, const cerb_event& e, const std::string& exe, const std::string& blockers)
{
    auto line = event_json(e, {trail.id, exe, boot_to_wall_});
    if (!blockers.empty())
        line["blockers"] = blockers;
    append(trail, std::move(line));
    if (trail.pending.size() >= write_every)
        write_pending(trail);
}

// A denial of a brokered tool's says so: it is the container's call, not the container's process.
void Collector::append(Trail& trail, nlohmann::ordered_json line)
{
    if (!trail.brokered.is_null())
        line["brokered"] = trail.brokered;
    trail.pending += dump_line(line);
    trail.pending += '\n';
}

// Landlock, seccomp and the read-only mounts refuse without a word: the call
// observer watches landlock containers' calls come back, host-wide, so it is
// attached only once such a container registers, and held until the collector exits.
void Collector::observe_calls()
{
    if (observer_ || observer_refused_ || !observe_calls_)
        return;
    try {
        observer_.emplace(kernel::CallObserver::attach());
        spdlog::info("call observer attached");
    } catch (const Error& e) {
        observer_refused_ = true;
        spdlog::warn("{}: refusals of landlock containers that the kernel audit log does not carry will not "
                     "reach the trails",
                     e.what());
    }
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
        write_drained(taken_[next_taken_++]);
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
            trails_[entry.cgroup_id] =
                Trail{entry.id,     entry.trail,  UniqueFd(), "", false, entry.audit_log,
                      entry.policy, UniqueFd(), entry.brokered, entry.cgroup_dir};
        if (entry.enforcement == "landlock")
            observe_calls();
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
    std::erase_if(observed_, [&](const ObservedRefusal& o) { return o.cgroup_id == cgroup_id; });
    std::erase_if(held_records_, [&](const HeldRecord& r) { return r.cgroup_id == cgroup_id; });
    std::erase_if(held_calls_, [&](const HeldCall& c) { return c.call.cgroup_id == cgroup_id; });
    for (auto it = domains_.begin(); it != domains_.end();)
        it = it->second == cgroup_id ? domains_.erase(it) : std::next(it);
}

bool Collector::policy_present(uint64_t cgroup_id) const
{
    cerb_policy policy{};
    return bpf_map_lookup_elem(policies_.get(), &cgroup_id, &policy) == 0;
}

// Containers whose policy went without a finish (a failed create, a delete
// that found no collector): their events are drained by now. A brokered
// call's cgroup may have no policy entry (a tool with path rules alone): it
// goes with its cgroup.
void Collector::collect_garbage()
{
    std::vector<uint64_t> gone;
    for (const auto& [cgroup_id, trail] : trails_)
        if (trail.cgroup_dir.empty() ? !policy_present(cgroup_id) : !files::exists(trail.cgroup_dir))
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
    // Where the kernel builds no SYSCALL record it sends no end-of-event
    // record either: such events end by age.
    write_landlock(landlock_.take(Completion::aged));
    write_held_records(false);
    // The kernel answers AUDIT_GET from a thread it starts for it: asked only while it can matter.
    if (!trails_.empty())
        refresh_audit_state();
    for (auto& [cgroup_id, trail] : trails_)
        report_lost(cgroup_id, trail);
    sync_all();
    collect_garbage();
    if (unknown_) {
        spdlog::warn("{} events of cgroups no container registered were dropped", unknown_);
        unknown_ = 0;
    }
    if (not_refusals_) {
        spdlog::debug("{} failed calls of landlock containers were no refusal of their policy", not_refusals_);
        not_refusals_ = 0;
    }
    if (paired_) {
        spdlog::debug("{} Landlock denials came both from the kernel audit log and from the call observer: "
                      "written once each",
                      paired_);
        paired_ = 0;
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
        write_landlock(landlock_.take(Completion::all));
    }
    write_held_records(true, cgroup_id); // every record of the container's that its calls did not pair
    if (auto it = trails_.find(cgroup_id); it != trails_.end())
        report_lost(cgroup_id, it->second);
    forget(cgroup_id);
    return "ok";
}

// The root a call's names resolve in: its process's while it lives (held in
// own), else the container's, handed over by create.
int Collector::root_for(const Trail& trail, uint32_t pid, UniqueFd& own)
{
    own.reset(open(("/proc/" + std::to_string(pid) + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    return own ? own.get() : trail.root.get();
}

std::string Collector::take_root(uint64_t cgroup_id, UniqueFd root)
{
    if (!trails_.count(cgroup_id))
        reload_registry();
    auto it = trails_.find(cgroup_id);
    if (it == trails_.end())
        return "cgroup " + std::to_string(cgroup_id) + " is not registered";
    it->second.root = std::move(root);
    return "ok";
}

// A call of an audit-mode container, held before it runs: recorded when the
// policy in enforce mode would refuse it (the supervisor lets it through).
void Collector::judge_held_call(uint64_t cgroup_id, const cerb_call_event& call)
{
    reloaded_in_batch_ = false;
    Trail* trail = trail_of(cgroup_id);
    if (!trail)
        return;
    boot_to_wall_ = boot_to_wall_offset();
    UniqueFd own;
    if (auto e = judge_(call, trail->policy, root_for(*trail, call.pid, own), CERB_VERDICT_AUDIT))
        write_event(*trail, *e, process_exe(call.pid));
    write_pending(*trail);
}

void Collector::on_ready(const epoll_event& event)
{
    if (supervisor_->on_ready(event))
        return;
    if (event.data.u64 == ring_ready) {
        consume();
    } else if (event.data.u64 == audit_log_ready) {
        read_audit_log();
    } else {
        serve_request();
    }
}

void Collector::serve_request()
{
    daemon::answer_request(listener_.get(), [&](const std::string& request, UniqueFd fd,
                                                const daemon::StillWorking& still_working) -> std::string {
        if (request.rfind("finish ", 0) == 0)
            return finish(std::strtoull(request.c_str() + 7, nullptr, 10), still_working);
        if (request.rfind("root ", 0) == 0 && fd)
            return take_root(std::strtoull(request.c_str() + 5, nullptr, 10), std::move(fd));
        if (request.rfind("supervise ", 0) == 0 && fd)
            return supervisor_->supervise(std::strtoull(request.c_str() + 10, nullptr, 10), std::move(fd));
        if (request == "ping") {
            reload_registry(); // the call observer attached before the init runs
            return "ok"; // create, making sure a collector listens before the init runs
        }
        return "unknown request";
    });
}

void Collector::run()
{
    daemon::Life life{collector_daemon(), lock_.get(), epoll_.get(), listener_, {.u64 = request_ready}, tick, idle_linger,
                      [&](const epoll_event& event) { on_ready(event); },
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

int run_collector(CallJudge judge, bool observe_calls)
{
    Collector collector(std::move(judge), observe_calls);
    return daemon::run("audit collector", [&] { return collector.start(); }, [&] { collector.run(); });
}

} // namespace cerberus::audit
