// SPDX-License-Identifier: Apache-2.0
#include "audit/audit.hpp"

#include "audit/audit_format.hpp"
#include "audit/audit_registry.hpp"
#include "base/daemon.hpp"
#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "kernel/pinned_maps.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <ctime>

namespace cerberus::audit {
namespace {

// One request, one answer; the collector answers "ok" or an error message.
std::string ask_collector(const std::string& request)
{
    return daemon::ask(collector_daemon(), request, 10);
}

// The container's entry in the pinned policies map (its event counters).
std::optional<cerb_policy> policy_entry(uint64_t cgroup_id)
{
    auto map = kernel::open_map_if_pinned(kernel::policies_map);
    cerb_policy policy{};
    if (!map || bpf_map_lookup_elem(map->get(), &cgroup_id, &policy) < 0)
        return std::nullopt;
    return policy;
}

// A collector reads the ring buffer (and the kernel audit log) before the registered cgroup's first event.
void ensure_collector()
{
    try {
        // One that listens reads the ring buffer and the kernel audit log
        // already (Landlock names a domain's maker only with its first
        // denial); else one is started, and answers once it does.
        if (daemon::listening(collector_daemon()))
            return;
        if (std::string answer = ask_collector("ping"); answer != "ok")
            throw Error("the audit collector answered: " + answer, EIO);
    } catch (const Error& e) {
        spdlog::warn("starting the audit collector: {}; events wait in the ring buffer", e.what());
    }
}


} // namespace

std::string trail_path(const std::string& audit_dir, const std::string& id)
{
    return audit_dir + "/" + id + ".jsonl";
}

daemon::Daemon collector_daemon()
{
    return {run_dir, "collector", "audit-collector", "the audit collector"};
}

void register_container(const RuntimeOptions& rt, const std::string& id, uint64_t cgroup_id,
                        const TrailStart& start)
{
    std::string trail = trail_path(rt.audit_dir, id);
    with_context("starting the audit trail " + trail, [&] {
        files::make_dirs(rt.audit_dir, 0700);
        UniqueFd fd(open(trail.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
        if (!fd)
            throw_errno("open");
        timespec now{};
        clock_gettime(CLOCK_REALTIME, &now);
        std::string line =
            dump_line(start_json(id, int64_t{now.tv_sec} * 1000000000 + now.tv_nsec, start)) + "\n";
        if (write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            throw_errno("write");
    });
    with_context("registering container " + id + " with the audit collector", [&] {
        write_registry_entry({.cgroup_id = cgroup_id, .id = id, .trail = trail, .root = rt.root,
                              .enforcement = start.enforcement, .policy = start.policy,
                              .audit_log = start.audit_log, .calls_observed = start.calls_observed});
    });
    ensure_collector();
}

void register_brokered_call(const BrokeredCall& call)
{
    with_context("registering the brokered call of " + call.id + " with the audit collector", [&] {
        write_registry_entry({.cgroup_id = call.cgroup_id, .id = call.id, .trail = call.trail,
                              .enforcement = "brokered tool", .policy = call.policy, .audit_log = call.audit_log,
                              .brokered = call.brokered, .cgroup_dir = call.cgroup_dir});
    });
    ensure_collector();
}


void finish_container(uint64_t cgroup_id, const std::string& pin_dir)
{
    if (pin_dir != CERB_PIN_DIR) {
        spdlog::info("cgroup {} used {}, another build's pins: that build's collector, while it runs, writes its "
                     "last events",
                     cgroup_id, pin_dir);
        return;
    }
    std::string registry_entry = registry_entry_path(cgroup_id);
    if (!files::exists(registry_entry))
        return; // never registered, or already finished
    // Nothing ever reached the ring buffer: no trail to write, no collector to
    // wait for. Landlock's denials may take the kernel audit log instead, where
    // no count says (create recorded whether they can reach the trail), unless
    // the call observer saw each refused call, so that a denial is an event too.
    bool only_ring_buffer = false;
    try {
        auto entry = nlohmann::json::parse(files::read_file(registry_entry));
        only_ring_buffer = !entry.value("audit_log", entry.value("enforcement", "") == "landlock") ||
                           entry.value("calls_observed", false);
    } catch (const std::exception&) {
    }
    if (auto policy = policy_entry(cgroup_id);
        only_ring_buffer && policy && policy->events_sent == 0 && policy->events_lost == 0) {
        if (unlink(registry_entry.c_str()) == 0 || errno == ENOENT)
            return;
    }
    try {
        std::string answer = ask_collector("finish " + std::to_string(cgroup_id));
        if (answer != "ok")
            throw Error("the audit collector answered: " + answer, EIO);
    } catch (const Error& e) {
        spdlog::warn("writing the last audit events of cgroup {}: {}", cgroup_id, e.what());
    }
}

namespace {

void warn_root_not_taken(uint64_t cgroup_id, const std::string& why)
{
    spdlog::warn("handing the root of cgroup {} to the audit collector: {}; the names of calls whose process is "
                 "gone are judged as written",
                 cgroup_id, why);
}

} // namespace

RootHandOver::RootHandOver(uint64_t cgroup_id, int root_fd) : cgroup_id_(cgroup_id)
{
    try {
        answer_ = daemon::send_running_with_fd(collector_daemon(), "root " + std::to_string(cgroup_id), root_fd, 10);
    } catch (const Error& e) {
        warn_root_not_taken(cgroup_id, e.what());
    }
}

void RootHandOver::confirm() noexcept
{
    if (cgroup_id_ == 0)
        return;
    try {
        auto answer = answer_.wait();
        if (answer != "ok")
            warn_root_not_taken(cgroup_id_, "the audit collector answered: " + answer.value_or("nothing (none runs)"));
    } catch (const std::exception& e) {
        warn_root_not_taken(cgroup_id_, e.what());
    }
    cgroup_id_ = 0;
}

void supervise(uint64_t cgroup_id, int socket_fd)
{
    with_context("handing the audit-mode calls of cgroup " + std::to_string(cgroup_id) + " to the audit collector",
                 [&] {
                     auto answer = daemon::ask_running_with_fd(collector_daemon(),
                                                               "supervise " + std::to_string(cgroup_id), socket_fd, 10);
                     if (answer != "ok")
                         throw Error("it answered: " + answer.value_or("nothing (none runs)"), EIO);
                 });
}

std::optional<uint64_t> events_lost(uint64_t cgroup_id)
{
    if (auto policy = policy_entry(cgroup_id))
        return policy->events_lost;
    return std::nullopt;
}

} // namespace cerberus::audit
