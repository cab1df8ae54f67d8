#include "policy_setup.hpp"

#include "bpf_loader.hpp"
#include "policy_compile.hpp"

namespace cerberus::policy_setup {

Prepared prepare(const RuntimeOptions& rt, spec::Spec& spec)
{
    policy::PolicySources sources;
    sources.policy_dir = rt.policy_dir;
    sources.default_policy_file = rt.default_policy;
    sources.lock = rt.lock_policy;
    Prepared prepared;
    prepared.policy = policy::resolve_policy(spec.annotations, sources);
    if (!prepared.policy)
        return prepared;
    // Fail closed before anything is set up: never run the agent unprotected.
    bpf::check_kernel_support();
    policy::compile_policy(*prepared.policy, 0, 0); // limits are checked here, not midway
    policy::apply_policy_to_spec(*prepared.policy, spec);
    return prepared;
}

void install(const Prepared& prepared, uint64_t cgroup_id)
{
    auto maps = bpf::PolicyMaps::open_or_load();
    maps.install(policy::compile_policy(*prepared.policy, cgroup_id, maps.path_seed()));
}

void remove(uint64_t cgroup_id)
{
    if (auto maps = bpf::PolicyMaps::open_pinned())
        maps->remove(cgroup_id);
}

} // namespace cerberus::policy_setup
