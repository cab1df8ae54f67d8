#include "container/container_policy.hpp"

#include "audit/audit.hpp"
#include "base/error.hpp"
#include "base/files.hpp"

#include <spdlog/spdlog.h>

#include <utility>

namespace cerberus::container {
namespace {

audit::TrailStart trail_start(const policy::Backend& backend, const policy::Policy& policy)
{
    audit::TrailStart start;
    start.enforcement = policy::enforcement_name(backend.kind());
    for (auto kind : policy::unreported_kinds(backend, policy))
        start.not_reported.push_back(policy::rule_kind_name(kind));
    auto table = backend.coverage();
    for (const auto& row : table)
        if (row.enforced == policy::Level::partial && policy::uses_kind(policy, row.kind))
            start.partly_enforced.push_back(policy::rule_kind_name(row.kind));
    return start;
}

} // namespace

PolicyGuard::PolicyGuard(const policy::Backend& backend, uint64_t cgroup_id, UniqueFd cgroup_dir,
                         std::string keys_file)
    : backend_(&backend), cgroup_id_(cgroup_id), cgroup_dir_(std::move(cgroup_dir)), keys_file_(std::move(keys_file))
{
}

PolicyGuard::PolicyGuard(PolicyGuard&& other) noexcept
    : backend_(other.backend_), cgroup_id_(other.cgroup_id_), cgroup_dir_(std::move(other.cgroup_dir_)),
      keys_file_(std::move(other.keys_file_)), armed_(std::exchange(other.armed_, false))
{
}

PolicyGuard PolicyGuard::install(const RuntimeOptions& rt, const std::string& id, policy_setup::Prepared& prepared,
                                 const cgroups::Cgroup& cgroup, const state::ContainerDir& dir)
{
    PolicyGuard guard(*prepared.backend, cgroup.id(), cgroup.open_unified_dir(), dir.policy_keys_path());
    guard.armed_ = false; // nothing of ours is in the kernel until install has begun
    files::write_file_atomic(dir.policy_path(), policy::policy_document(*prepared.policy), 0600);
    policy::assign_cgroup(prepared.compiled, guard.cgroup_id_);
    guard.armed_ = true; // install is all or nothing, and removal a no-op for what is not there
    prepared.backend->install(prepared.compiled, {guard.cgroup_id_, guard.cgroup_dir_.get()}, guard.keys_file_);
    audit::register_container(rt, id, guard.cgroup_id_, trail_start(*prepared.backend, *prepared.policy));
    return guard;
}

PolicyGuard PolicyGuard::adopt(const state::ContainerState& st, const cgroups::Cgroup& cgroup,
                               const state::ContainerDir& dir)
{
    auto kind = policy::parse_enforcement(st.enforcement.empty() ? "bpf-lsm" : st.enforcement);
    if (!kind)
        throw Error("state.json: unknown enforcement \"" + st.enforcement + "\"", EINVAL);
    UniqueFd cgroup_dir;
    try {
        cgroup_dir = cgroup.open_unified_dir();
    } catch (const Error& e) {
        spdlog::debug("the cgroup of {} is gone: {}", st.id, e.what()); // its programs went with it
    }
    return PolicyGuard(policy::backend(*kind), st.cgroup_id, std::move(cgroup_dir), dir.policy_keys_path());
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
    backend_->remove({cgroup_id_, cgroup_dir_.get()}, keys_file_);
}

void PolicyGuard::retire()
{
    armed_ = false;
    audit::finish_container(cgroup_id_); // its last events, before the policy entry and lost count go
    remove_entries();
}

} // namespace cerberus::container
