// SPDX-License-Identifier: Apache-2.0
// The audit collector's daemon, inside audit/: its trails and its state. Two
// files implement it: audit_collector.cpp (the ring buffer, the call
// observer, requests, the registry) and audit_collector_log.cpp (Landlock's
// records from the kernel audit log).
#pragma once

#include "audit/audit_collector.hpp"
#include "audit/call_supervisor.hpp"
#include "audit/event_drain.hpp"
#include "audit/landlock_records.hpp"
#include "base/daemon.hpp"
#include "base/fd.hpp"
#include "kernel/call_observer.hpp"

#include <nlohmann/json.hpp>
#include <sys/epoll.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::audit {

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

// One denial can reach the collector twice: from the call observer (the
// refused call, at its return) and from the kernel audit log (Landlock's
// record, while kernel audit is on), in either order. Each side is kept this
// long for the other to pair with; a record of Landlock's not paired by then
// is written alone (a refusal the observer did not see); an observed call is
// held for its record while kernel audit is on (so that its line carries the
// record's blockers), written at once while it is off. So each denial is one
// line whatever the audit state was at create or at the denial.
constexpr auto pair_record_wait = std::chrono::seconds(1);     // a Landlock record, held for its call
constexpr auto pair_call_wait = std::chrono::milliseconds(500); // a call, held for its record while audit is on
constexpr auto pair_call_keep = std::chrono::seconds(5);       // a written call, for its record to come

// A refusal of Landlock's that the observer saw and the collector wrote.
struct ObservedRefusal {
    uint64_t cgroup_id = 0;
    int64_t pid = 0;
    uint16_t op = 0;
    std::string target;
    std::chrono::steady_clock::time_point seen;
};

// A refused call waiting for Landlock's record of it, its line ready.
struct HeldCall {
    ObservedRefusal call;
    nlohmann::ordered_json line;
    std::chrono::steady_clock::time_point until;
};

// A record of Landlock's waiting for the observer's call of the same denial.
struct HeldRecord {
    uint64_t cgroup_id = 0;
    int64_t pid = 0; // 0: the kernel sent no SYSCALL record
    std::string path, blockers;
    nlohmann::ordered_json line;
    std::chrono::steady_clock::time_point until;
};

// epoll tags (the call supervisor's fds have larger ones, call_supervisor.hpp)
constexpr uint64_t ring_ready = 0, request_ready = 1, audit_log_ready = 2;

// One container's trail file, opened on first use.
struct Trail {
    std::string id;
    std::string path;
    UniqueFd fd;
    std::string pending;
    bool unsynced = false;
    bool audit_log = false; // RegistryEntry::audit_log
    nlohmann::json policy;  // the document the call observer's calls are judged against
    UniqueFd root;          // the container's root, from create: for calls of processes gone since
    nlohmann::json brokered; // RegistryEntry::brokered: each line of this cgroup's says which tool call it was
    std::string cgroup_dir;  // RegistryEntry::cgroup_dir
};

class Collector {
public:
    Collector(CallJudge judge, bool observe_calls) : judge_(std::move(judge)), observe_calls_(observe_calls) {}
    // False when another collector holds the lock.
    bool start();
    void run();

private:
    Trail* trail_of(uint64_t cgroup_id);
    void write_drained(const DrainedEvent& drained);
    void handle_call(const cerb_call_event& call, const std::string& exe);
    void write_event(Trail& trail, const cerb_event& e, const std::string& exe, const std::string& blockers = "");
    void observe_calls();
    int root_for(const Trail& trail, uint32_t pid, UniqueFd& own);
    std::string take_root(uint64_t cgroup_id, UniqueFd root);
    void judge_held_call(uint64_t cgroup_id, const cerb_call_event& call);
    void on_ready(const epoll_event& event);
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
    std::optional<std::string> pair_with_record(uint64_t cgroup_id, const cerb_event& e);
    bool pair_with_call(uint64_t cgroup_id, int64_t pid, const std::string& path, const std::string& blockers);
    bool pair_with_held_call(uint64_t cgroup_id, int64_t pid, const std::string& path, const std::string& blockers);
    void write_held_records(bool all, uint64_t cgroup_id = 0);
    void refresh_audit_state();
    void write_line(uint64_t cgroup_id, const nlohmann::ordered_json& line);
    void append(Trail& trail, nlohmann::ordered_json line);

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
    LandlockRecords landlock_;
    std::map<uint64_t, uint64_t> domains_; // Landlock domain id -> cgroup id of the process that made it
    std::string cgroup2_;
    uint64_t audit_lost_ = 0, unknown_domains_ = 0, markers_sent_ = 0;
    // The landlock backend's call observer, held while landlock containers are registered (and until exit).
    CallJudge judge_;
    std::optional<kernel::CallObserver> observer_;
    bool observe_calls_ = true; // false: the observer is never attached (run_collector)
    bool observer_refused_ = false;
    std::optional<CallSupervisor> supervisor_; // audit mode's held calls, once the epoll fd is made
    uint64_t not_refusals_ = 0; // calls the observer sent that no rule of their policy refused
    // The two sides of Landlock's denials, kept for pairing (pair_record_wait).
    std::deque<ObservedRefusal> observed_;
    std::deque<HeldRecord> held_records_;
    std::deque<HeldCall> held_calls_;
    bool landlock_logs_ = false; // kernel audit on (Landlock ABI 7), as last asked: records are to come
    uint64_t paired_ = 0;
};

} // namespace cerberus::audit
