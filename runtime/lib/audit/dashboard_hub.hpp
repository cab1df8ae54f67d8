// SPDX-License-Identifier: Apache-2.0
// What the dashboard shows, gathered from what already exists: the audit
// registry (live policed containers, their policy and backend), the trails
// (every record), the kernel's counters (events lost) and, through the
// caller's StatusOf, the state dirs (status). One thread follows them every
// 100 ms; the HTTP handlers read snapshots and wait for new records. Nothing
// is written anywhere.
#pragma once

#include "audit/audit_trail.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cerberus::audit {

class DashboardHub {
public:
    // A live container's status from its state root and id ("running", ...);
    // the state dirs belong to the container layer above this one.
    using StatusOf = std::function<std::string(const std::string& root, const std::string& id)>;

    // Trails are found in the registry and as <audit_dir>/*.jsonl.
    DashboardHub(std::string audit_dir, StatusOf status_of);
    ~DashboardHub();
    DashboardHub(const DashboardHub&) = delete;
    DashboardHub& operator=(const DashboardHub&) = delete;

    // Reads everything there is now, then follows it on a thread of its own.
    void start();
    // Wakes every waiter; wait_records returns at once from then on.
    void stop();

    // Every container with a trail or a registry entry: id, live, status,
    // enforcement, policy, denials, audits, lost, last (the last denial record),
    // started, per_minute ([[minute, denials], ...] for the last hour).
    nlohmann::json containers() const;

    // The last `limit` records of the container's trail and how many it has;
    // nullopt for an id the hub does not know.
    std::optional<nlohmann::json> trail(const std::string& id, size_t limit) const;

    // Records (trail lines, as written) with their sequence numbers.
    struct Numbered {
        uint64_t seq;
        std::string line;
    };
    // Up to `limit` of the latest records, oldest first.
    std::vector<Numbered> recent(size_t limit) const;
    // The records after `after`, waiting up to `timeout` for one; empty on
    // timeout or stop. Records older than the kept window are skipped.
    std::vector<Numbered> wait_records(uint64_t after, std::chrono::milliseconds timeout) const;
    uint64_t last_seq() const;
    bool stopped() const;

private:
    struct Followed {
        std::string id;
        std::unique_ptr<TrailTail> tail;
        bool live = false; // has a registry entry
        uint64_t cgroup_id = 0;
        std::string root, enforcement, started;
        nlohmann::json policy = nlohmann::json::object();
        uint64_t denials = 0, audits = 0, lost = 0;
        nlohmann::json last; // the last denial record
        std::map<int64_t, uint64_t> per_minute;
    };

    void poll();
    void discover();
    void take(Followed& followed, const std::string& line);
    void run();

    std::string audit_dir_;
    StatusOf status_of_;
    mutable std::mutex mutex_;
    mutable std::condition_variable arrived_;
    std::map<std::string, Followed> followed_; // by trail path
    std::deque<Numbered> feed_;
    uint64_t seq_ = 0;
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace cerberus::audit
