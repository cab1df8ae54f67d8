// SPDX-License-Identifier: Apache-2.0
#include "container/container_policy.hpp"

#include "audit/audit.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "broker/broker.hpp"
#include "dns/dns_gate.hpp"
#include "egress/egress_trust.hpp"
#include "kernel/call_observer.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/policy_document.hpp"

#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <utility>

namespace cerberus::container {
namespace {

// The trail's first line for a policy under that backend: the backend, and
// the rule kinds it cannot report or enforces only in part.
audit::TrailStart trail_start(const policy::BackendChoice& choice, const policy::Policy& policy)
{
    const policy::Backend& backend = *choice.backend;
    const auto& table = choice.coverage;
    audit::TrailStart start;
    start.enforcement = policy::enforcement_name(backend.kind());
    start.policy = policy::to_document(policy);
    start.passed_over = choice.passed_over;
    for (auto kind : policy::unreported_kinds(table, policy)) {
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
    start.calls_observed = backend.kind() == policy::Enforcement::landlock && kernel::observer_support().calls;
    return start;
}

} // namespace

ContainerPolicy ContainerPolicy::decided(const RuntimeOptions& rt, const std::string& id,
                                         policy_setup::Prepared prepared)
{
    ContainerPolicy owner;
    owner.rt_ = rt;
    owner.id_ = id;
    owner.backend_ = prepared.choice.backend;
    owner.prepared_ = std::move(prepared);
    return owner;
}

ContainerPolicy ContainerPolicy::decide(const RuntimeOptions& rt, const std::string& id, spec::Spec& spec,
                                        const std::string& rootfs)
{
    ContainerPolicy owner = decided(rt, id, policy_setup::prepare(rt, spec, rootfs));
    owner.rootfs_ = rootfs;
    if (owner.prepared_.policy) {
        broker::add_mounts(*owner.prepared_.policy, spec, rootfs, owner.state_dir());
        owner.egress_ = egress::plan_egress(*owner.prepared_.policy, spec, rootfs, owner.state_dir());
        auto& forced = owner.prepared_.forced; // recorded in the state: exec's processes get the variables too
        forced.default_env.insert(forced.default_env.end(), owner.egress_.environment.begin(),
                                  owner.egress_.environment.end());
        if (spec.process)
            forced.apply_to(*spec.process);
    }
    return owner;
}

ContainerPolicy ContainerPolicy::decide_for_hook(const RuntimeOptions& rt, const std::string& id,
                                                 policy::Policy policy, spec::Spec& spec, const std::string& rootfs)
{
    if (!policy.commands.empty())
        throw Error("policy.commands: the OCI hook cannot add the command shim's mounts to a container another "
                    "runtime makes; run it with cerberus",
                    EINVAL);
    if (!policy.allowed_http.empty())
        throw Error("policy.allowed_http: the OCI hook cannot add the egress proxy's trust store mounts to a "
                    "container another runtime makes; run it with cerberus",
                    EINVAL);
    RuntimeOptions under_bpf_lsm = rt;
    under_bpf_lsm.enforcement = policy::enforcement_name(policy::Enforcement::bpf_lsm);
    return decided(rt, id, policy_setup::prepare(under_bpf_lsm, std::move(policy), spec, rootfs));
}

ContainerPolicy ContainerPolicy::adopt(const std::string& enforcement, const std::string& pin_dir,
                                       uint64_t cgroup_id, PolicyRecords records)
{
    // A state without one is a build's from before the backends: the BPF LSM was the only one.
    auto kind = policy::parse_enforcement(enforcement.empty() ? "bpf-lsm" : enforcement);
    if (!kind)
        throw Error("state.json: unknown enforcement \"" + enforcement + "\"", EINVAL);
    ContainerPolicy owner;
    owner.adopted_ = true;
    owner.backend_ = &policy::backend(*kind);
    owner.cgroup_id_ = cgroup_id;
    owner.keys_file_ = std::move(records.keys);
    // A state without a pin dir is a build's from before the layout id, which pinned in CERB_PIN_ROOT.
    owner.pin_dir_ = pin_dir.empty() ? CERB_PIN_ROOT : pin_dir;
    owner.document_ = std::move(records.document);
    return owner;
}

ContainerPolicy ContainerPolicy::adopt(const state::ContainerState& st, const state::ContainerDir& dir)
{
    if (!st.has_policy)
        return ContainerPolicy();
    return adopt(st.enforcement, st.pin_dir, st.cgroup_id, {dir.policy_path(), dir.policy_keys_path()});
}

ContainerPolicy::ContainerPolicy(ContainerPolicy&& other) noexcept
    : rt_(std::move(other.rt_)), id_(std::move(other.id_)), prepared_(std::move(other.prepared_)),
      backend_(other.backend_), cgroup_id_(other.cgroup_id_), cgroup_dir_(std::move(other.cgroup_dir_)),
      keys_file_(std::move(other.keys_file_)), pin_dir_(std::move(other.pin_dir_)),
      document_(std::move(other.document_)), adopted_(other.adopted_), armed_(std::exchange(other.armed_, false)),
      restrictions_(std::move(other.restrictions_)), supervisor_(std::move(other.supervisor_)),
      root_handover_(std::move(other.root_handover_))
{
}

ContainerPolicy::~ContainerPolicy()
{
    roll_back();
}

std::string ContainerPolicy::enforcement() const
{
    return active() ? policy::enforcement_name(backend_->kind()) : "";
}

const policy::ProcessRestrictions&
ContainerPolicy::restrict_processes(const spec::Spec& spec, const std::optional<seccomp::CompiledSeccomp>& spec_filter,
                                    const std::string& config)
{
    // exec: rebuilt from the document the container was created with.
    if (adopted_ && !document_.empty() && files::exists(document_))
        prepared_.policy = policy_setup::load_saved(document_);
    if (!prepared_.policy)
        return restrictions_;
    restrictions_ = with_context(config, [&] { return backend_->restrictions(*prepared_.policy, spec); });
    const auto& added = restrictions_.seccomp;
    if (!added || !added->has_listener())
        return restrictions_;
    if (spec_filter && spec_filter->has_listener())
        throw Error(config + ": linux.seccomp has a listener, and a process may have only one: an audit-mode policy "
                             "under the landlock backend needs it for its own",
                    EBUSY);
    int ends[2];
    check(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends), "socketpair");
    supervisor_.collector_end.reset(ends[0]);
    supervisor_.process_end.reset(ends[1]);
    return restrictions_;
}

void ContainerPolicy::install(uint64_t cgroup_id, UniqueFd cgroup_dir, PolicyRecords records)
{
    if (!active())
        return;
    cgroup_id_ = cgroup_id;
    cgroup_dir_ = std::move(cgroup_dir);
    keys_file_ = std::move(records.keys);
    if (!records.document.empty())
        files::write_file_atomic(records.document, policy::policy_document(*prepared_.policy), 0600);
    if (!prepared_.policy->commands.empty())
        broker::make_socket_dir(state_dir()); // before the init binds it
    egress::write_trust(egress_, rootfs_, state_dir()); // before the init binds its bundles
    policy::assign_cgroup(prepared_.compiled, cgroup_id_);
    armed_ = true; // install is all or nothing, and removal a no-op for what is not there
    backend_->install(prepared_.compiled, {cgroup_id_, cgroup_dir_.get()}, keys_file_);
    audit::register_container(rt_, id_, cgroup_id_, trail_start(prepared_.choice, *prepared_.policy));
}

void ContainerPolicy::exempt_until_exec(pid_t pid) const
{
    if (active())
        backend_->exempt_until_exec(pid, {cgroup_id_, -1, pin_dir_});
}

void ContainerPolicy::after_mounts(int root_fd)
{
    const auto& policy = prepared_.policy;
    if (policy)
        backend_->fill_restrictions(*policy, restrictions_, root_fd);
    if (active() && !adopted_) {
        dns::restart_if_needed(); // for the containers of a gate that died
        if (policy::has_host_names(*policy)) // its loopback is up and its resolv.conf in place
            dns::register_container(id_, cgroup_id_, audit::trail_path(rt_.audit_dir, id_), *policy,
                                    dns::container_nameservers(root_fd), egress::trust_dir(state_dir()));
        broker::restart_if_needed(); // for the containers of a broker that died
        if (!policy->commands.empty()) // the socket directory is bound in
            broker::register_container(id_, cgroup_id_, audit::trail_path(rt_.audit_dir, id_), *policy, state_dir());
        if (backend_->kind() == policy::Enforcement::landlock) // the BPF programs build the paths they report
            root_handover_ = audit::RootHandOver(cgroup_id_, root_fd);
    }
    if (supervisor_.collector_end)
        audit::supervise(cgroup_id_, supervisor_.collector_end.get());
}

void ContainerPolicy::roll_back() noexcept
{
    if (!std::exchange(armed_, false))
        return;
    try {
        remove_entries();
    } catch (const Error& e) {
        spdlog::warn("removing the policy of cgroup {}: {}", cgroup_id_, e.what());
    }
}

void ContainerPolicy::remove_entries() const
{
    if (pin_dir_ == CERB_PIN_DIR) { // another build's gate and broker serve the containers of its layout
        dns::forget_container(cgroup_id_);
        broker::forget_container(cgroup_id_);
    }
    backend_->remove({cgroup_id_, cgroup_dir_.get(), pin_dir_}, keys_file_);
}

void ContainerPolicy::retire()
{
    if (!active())
        return;
    armed_ = false;
    audit::finish_container(cgroup_id_, pin_dir_); // its last events, before the policy entry and lost count go
    remove_entries();
}

} // namespace cerberus::container
