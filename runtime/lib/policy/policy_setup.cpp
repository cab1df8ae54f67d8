// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_setup.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "policy/policy_containment.hpp"
#include "policy/rule_paths.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace cerberus::policy_setup {

namespace {

// The DNS gate listens in the container's network namespace; in the host's it
// would steer, and admit answers for, everything else on the host.
void require_own_network(const policy::Policy& policy, const spec::Spec& spec)
{
    if (!policy::has_host_names(policy) || !policy::shares_host_network(spec))
        return;
    const auto& allowed = policy.allowed_hosts.value_or(std::vector<policy::HostRule>{});
    auto named = std::find_if(allowed.begin(), allowed.end(), [](const policy::HostRule& rule) { return !rule.network; });
    std::string field = named != allowed.end() ? "policy.allowed_hosts[" + std::to_string(named - allowed.begin()) + "]"
                                               : "policy.ask_hosts.names[0]";
    throw Error(field + ": host names need the container in a network namespace of its own (the DNS gate listens "
                    "there); list addresses instead",
                EINVAL);
}

} // namespace

policy::Enforcement requested_enforcement(const RuntimeOptions& rt)
{
    auto kind = policy::parse_enforcement(rt.enforcement);
    if (!kind)
        throw Error("--enforcement: unknown backend \"" + rt.enforcement +
                        "\" (expected auto, bpf-lsm, fmod-ret or landlock)",
                    EINVAL);
    return *kind;
}

std::optional<policy::Policy> resolve(const RuntimeOptions& rt, const spec::Spec& spec)
{
    policy::PolicySources sources;
    sources.policy_dir = rt.policy_dir;
    sources.default_policy_file = rt.default_policy;
    sources.lock = rt.lock_policy;
    return policy::resolve_policy(spec.annotations, sources);
}

Prepared prepare(const RuntimeOptions& rt, policy::Policy policy, spec::Spec& spec, const std::string& rootfs)
{
    Prepared prepared;
    require_own_network(policy, spec);
    prepared.policy = std::move(policy);
    // Fail closed before anything is set up: never run the agent unprotected.
    prepared.choice = policy::choose_backend(requested_enforcement(rt), *prepared.policy);
    // What the backend carries out only in part on this kernel (a Landlock ABI without truncate, say) is
    // said at create too, in the runtime's log (--log, --debug), not only in the trail's first line and
    // `cerberus check`; not on stderr, which engines and tests read as the container's own.
    for (const auto& row : prepared.choice.coverage)
        if (row.enforced == policy::Level::partial && policy::uses_kind(*prepared.policy, row.kind))
            spdlog::info("the {} backend enforces {} only in part: {}",
                         policy::enforcement_name(prepared.choice.backend->kind()),
                         policy::rule_kind_name(row.kind), row.note);
    // The kernel matches resolved paths: rules are installed for the files they name in this rootfs.
    prepared.compiled = policy::compile_policy(policy::with_resolved_paths(*prepared.policy, rootfs), 0,
                                               prepared.choice.backend->path_seed());
    prepared.forced = policy::forced_on_processes(*prepared.policy);
    if (spec.process)
        prepared.forced.apply_to(*spec.process);
    policy::keep_in_cgroup(*prepared.policy, spec, cgroups::Mounts::detect());
    if (policy::shares_host_network(spec))
        prepared.compiled.policy.flags |= CERB_HOST_NETWORK; // its loopback device reaches the host's services
    if (policy::shares_pid_namespace(spec))
        prepared.compiled.policy.flags |= CERB_SHARED_PIDS; // processes outside have numbers it can name
    prepared.choice.backend->adapt_spec(*prepared.policy, spec, rootfs);
    return prepared;
}

Prepared prepare(const RuntimeOptions& rt, spec::Spec& spec, const std::string& rootfs)
{
    auto policy = resolve(rt, spec);
    return policy ? prepare(rt, std::move(*policy), spec, rootfs) : Prepared{};
}

policy::Policy load_saved(const std::string& file)
{
    return with_context(file, [&] { return policy::parse_policy(files::read_file(file)); });
}

} // namespace cerberus::policy_setup
