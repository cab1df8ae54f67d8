// SPDX-License-Identifier: Apache-2.0
// The audit trail's part in the lifecycle. The BPF programs put every denial
// in one host-wide ring buffer; one host-wide collector process
// (`cerberus audit-collector`, audit_collector.hpp) writes them to
// <audit dir>/<id>.jsonl. create registers the container (cgroup id -> id and
// trail path) and makes sure the collector runs; delete has the collector
// drain what is left and write the final lost count before the policy goes.
// Enforcement never depends on any of this.
#pragma once

#include "audit/audit_format.hpp"
#include "base/daemon.hpp"
#include "base/runtime_options.hpp"
#include "kernel/pinned_maps.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace cerberus::audit {

// Host-wide, whatever --root says, one per layout (kernel/pinned_maps.hpp):
// there is one ring buffer per pin dir, and one collector that reads it.
// Holds collector.lock (flocked by the running collector, with its pid),
// collector.sock, collector.log and containers/<cgroup id> (the registry).
inline constexpr const char* run_dir = "/run/cerberus-audit/" CERB_LAYOUT_ID;

// <audit_dir>/<id>.jsonl
std::string trail_path(const std::string& audit_dir, const std::string& id);

// create, once the policy is in the kernel and before the init runs: writes
// the trail's first line (start: which policy, enforced by which backend, from
// when), records the container in the registry (audit_registry.hpp) and
// starts the collector unless one runs. Throws when the trail or the registry
// cannot be written; a collector that cannot be started is logged.
void register_container(const RuntimeOptions& rt, const std::string& id, uint64_t cgroup_id,
                        const TrailStart& start);

// A brokered tool's call in a cgroup of its own, under a policy of its own (broker/tool_policy.hpp).
struct BrokeredCall {
    uint64_t cgroup_id = 0;
    std::string cgroup_dir;
    std::string id, trail; // the calling container's
    nlohmann::json policy; // the tool's
    bool audit_log = false; // Landlock's denials of the tool come through the kernel audit log
    nlohmann::json brokered; // which call: {"tool": ..., "args": [...]}, in each of its denials
};

// The command broker, before the tool runs: the call's denials go to the
// calling container's trail, each marked with brokered. Undone by
// finish_container, which writes the call's last denials. Throws when the
// registry cannot be written.
void register_brokered_call(const BrokeredCall& call);

// delete, once the container's processes are gone and before its policy is
// removed: the collector writes every event still in the ring buffer and the
// final lost count, syncs the trail and forgets the container. Logs (never
// throws) when no collector answers. pin_dir is the container's (its state's):
// a container of another build's layout is left to that build's collector.
void finish_container(uint64_t cgroup_id, const std::string& pin_dir);

// create, under the landlock backend, once the container's mounts are in
// place: its root, where the collector resolves the names of calls whose
// process is gone by the time it reads them. The collector's answer is read
// by confirm(), called before the agent can run: create goes on meanwhile
// (the collector's wake-up was a round trip on every policed start). Neither
// throws; a collector that does not take the root is logged.
class RootHandOver {
public:
    RootHandOver() = default;
    RootHandOver(uint64_t cgroup_id, int root_fd);
    RootHandOver(RootHandOver&& other) noexcept
        : cgroup_id_(std::exchange(other.cgroup_id_, 0)), answer_(std::move(other.answer_))
    {
    }
    RootHandOver& operator=(RootHandOver&& other) noexcept
    {
        cgroup_id_ = std::exchange(other.cgroup_id_, 0);
        answer_ = std::move(other.answer_);
        return *this;
    }
    void confirm() noexcept;

private:
    uint64_t cgroup_id_ = 0;
    daemon::PendingAnswer answer_;
};

// create and exec, audit mode under the landlock backend: the socket the
// container process will send its seccomp listener on (the other end is
// the process's), for the collector to judge the calls it holds. Throws when
// no collector takes it: the process's held calls would wait for nobody.
void supervise(uint64_t cgroup_id, int socket_fd);

// Events of the container the BPF programs dropped so far; nullopt when it
// has no policy entry (no policy, or nothing pinned).
std::optional<uint64_t> events_lost(uint64_t cgroup_id);

// The collector as a daemon (base/daemon.hpp) in run_dir, started on demand.
daemon::Daemon collector_daemon();

} // namespace cerberus::audit
