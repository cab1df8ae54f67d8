// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_setup.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "policy/bpf_loader.hpp"
#include "policy/policy_compile.hpp"
#include "policy/policy_keys.hpp"

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
    if (!bpf::programs_loaded())
        bpf::check_kernel_support();
    policy::compile_policy(*prepared.policy, 0, 0); // limits are checked here, not midway
    prepared.forced = policy::forced_on_processes(*prepared.policy);
    if (spec.process)
        prepared.forced.apply_to(*spec.process);
    return prepared;
}

void install(const Prepared& prepared, uint64_t cgroup_id, const std::string& keys_file)
{
    auto maps = bpf::PolicyMaps::open_or_load();
    auto compiled = policy::compile_policy(*prepared.policy, cgroup_id, maps.path_seed());
    // Written before the entries exist, so no entry is ever without its record.
    files::write_file_atomic(keys_file, policy::encode_keys(policy::keys_of(compiled)), 0600);
    maps.install(compiled);
}

void exempt_until_exec(pid_t pid, uint64_t cgroup_id)
{
    auto maps = bpf::PolicyMaps::open_pinned();
    if (!maps)
        throw Error("the policy of cgroup " + std::to_string(cgroup_id) + " is not loaded: " + CERB_PIN_DIR +
                        " holds no programs",
                    ENOENT);
    maps->mark_setup_task(pid, cgroup_id);
}

void remove(uint64_t cgroup_id, const std::string& keys_file)
{
    auto maps = bpf::PolicyMaps::open_pinned();
    if (!maps)
        return;
    auto recorded = files::read_file_if_exists(keys_file);
    if (auto keys = recorded ? policy::decode_keys(*recorded, cgroup_id) : std::nullopt)
        maps->remove(*keys);
    else
        maps->remove_by_scan(cgroup_id);
}

} // namespace cerberus::policy_setup
