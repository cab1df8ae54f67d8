// SPDX-License-Identifier: Apache-2.0
#include "container/container_policy.hpp"

#include "audit/audit.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "dns/dns_gate.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/policy_document.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace cerberus::container {

audit::TrailStart trail_start(const policy::Backend& backend, const policy::Policy& policy)
{
    audit::TrailStart start;
    start.enforcement = policy::enforcement_name(backend.kind());
    start.policy = policy::to_document(policy);
    auto table = backend.coverage();
    for (auto kind : policy::unreported_kinds(backend, policy)) {
        std::string name(policy::rule_kind_name(kind));
        start.not_reported.push_back(name);
        for (const auto& row : table)
            if (row.kind == kind)
                start.why_not_reported[name] = row.note;
    }
    for (const auto& row : table) {
        bool used = policy::uses_kind(policy, row.kind);
        if (row.enforced == policy::Level::partial && used)
            start.partly_enforced.push_back(policy::rule_kind_name(row.kind));
        // Landlock reports its file and exec denials through the kernel audit log, while audit is on.
        bool landlock_files = row.kind == policy::RuleKind::paths || row.kind == policy::RuleKind::path_changes ||
                              row.kind == policy::RuleKind::allowed_bins;
        if (backend.kind() == policy::Enforcement::landlock && landlock_files && used && row.reported)
            start.audit_log = true;
    }
    return start;
}

PolicyGuard::PolicyGuard(const policy::Backend& backend, uint64_t cgroup_id, UniqueFd cgroup_dir,
                         std::string keys_file, std::string pin_dir)
    : backend_(&backend), cgroup_id_(cgroup_id), cgroup_dir_(std::move(cgroup_dir)), keys_file_(std::move(keys_file)),
      pin_dir_(std::move(pin_dir))
{
}

PolicyGuard::PolicyGuard(PolicyGuard&& other) noexcept
    : backend_(other.backend_), cgroup_id_(other.cgroup_id_), cgroup_dir_(std::move(other.cgroup_dir_)),
      keys_file_(std::move(other.keys_file_)), pin_dir_(std::move(other.pin_dir_)),
      armed_(std::exchange(other.armed_, false))
{
}

PolicyGuard PolicyGuard::install(const RuntimeOptions& rt, const std::string& id, policy_setup::Prepared& prepared,
                                 const cgroups::Cgroup& cgroup, const state::ContainerDir& dir)
{
    PolicyGuard guard(*prepared.backend, cgroup.id(), cgroup.open_unified_dir(), dir.policy_keys_path(), CERB_PIN_DIR);
    guard.armed_ = false; // nothing of ours is in the kernel until install has begun
    files::write_file_atomic(dir.policy_path(), policy::policy_document(*prepared.policy), 0600);
    policy::assign_cgroup(prepared.compiled, guard.cgroup_id_);
    guard.armed_ = true; // install is all or nothing, and removal a no-op for what is not there
    prepared.backend->install(prepared.compiled, {guard.cgroup_id_, guard.cgroup_dir_.get()}, guard.keys_file_);
    auto start = trail_start(*prepared.backend, *prepared.policy);
    start.passed_over = prepared.passed_over;
    audit::register_container(rt, id, guard.cgroup_id_, start);
    dns::restart_if_needed(); // for the containers of a gate that died
    return guard;
}

void PolicyGuard::open_dns_gate(const RuntimeOptions& rt, const std::string& id, const policy::Policy& policy,
                                int root_fd) const
{
    if (!policy::has_host_names(policy))
        return;
    dns::register_container(id, cgroup_id_, audit::trail_path(rt.audit_dir, id), policy,
                            dns::container_nameservers(root_fd));
}

const policy::Backend& recorded_backend(const state::ContainerState& st)
{
    // A state without one is a build's from before the backends: the BPF LSM was the only one.
    auto kind = policy::parse_enforcement(st.enforcement.empty() ? "bpf-lsm" : st.enforcement);
    if (!kind)
        throw Error("state.json: unknown enforcement \"" + st.enforcement + "\"", EINVAL);
    return policy::backend(*kind);
}

std::string recorded_pin_dir(const state::ContainerState& st)
{
    // A state without a pin dir is a build's from before the layout id, which pinned in CERB_PIN_ROOT.
    return st.pin_dir.empty() ? CERB_PIN_ROOT : st.pin_dir;
}

PolicyGuard PolicyGuard::adopt(const state::ContainerState& st, const state::ContainerDir& dir)
{
    return PolicyGuard(recorded_backend(st), st.cgroup_id, UniqueFd(), dir.policy_keys_path(), recorded_pin_dir(st));
}

PolicyGuard::~PolicyGuard()
{
    if (!armed_)
        return;
    try {
        remove_entries();
    } catch (const Error& e) {
        spdlog::warn("removing the policy of cgroup {}: {}", cgroup_id_, e.what());
    }
}

void PolicyGuard::remove_entries() const
{
    if (pin_dir_ == CERB_PIN_DIR) // another build's gate serves the containers of its layout
        dns::forget_container(cgroup_id_);
    backend_->remove({cgroup_id_, cgroup_dir_.get(), pin_dir_}, keys_file_);
}

void PolicyGuard::retire()
{
    armed_ = false;
    audit::finish_container(cgroup_id_, pin_dir_); // its last events, before the policy entry and lost count go
    remove_entries();
}

} // namespace cerberus::container
