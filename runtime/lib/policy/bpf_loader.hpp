// SPDX-License-Identifier: Apache-2.0
// The BPF LSM side of the agent policy on this host: a kernel support check,
// the programs loaded once and pinned under /sys/fs/bpf/cerberus (so
// enforcement never depends on a runtime process staying alive), and the
// per-container map entries, added in create and removed in delete.
#pragma once

#include "base/fd.hpp"
#include "policy/policy_compile.hpp"
#include "policy/policy_keys.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cerberus::bpf {

// Throws unless the kernel can enforce a policy: "bpf" must be listed in
// /sys/kernel/security/lsm (securityfs is mounted there when it is not).
void check_kernel_support(const std::string& securityfs = "/sys/kernel/security");

// True when this host's programs are loaded, attached and pinned (which
// proves the kernel enforces policies).
bool programs_loaded(const std::string& pin_dir = CERB_PIN_DIR);

// The pinned policy maps. Opening them loads, attaches and pins the
// programs first when this host has none pinned yet (under a lock, so
// concurrent creates load once).
class PolicyMaps {
public:
    // Loads on first use; throws a clear error when the kernel refuses the programs.
    static PolicyMaps open_or_load(const std::string& pin_dir = CERB_PIN_DIR);

    // The pinned maps, or nullopt when nothing is pinned (nothing to remove).
    static std::optional<PolicyMaps> open_pinned(const std::string& pin_dir = CERB_PIN_DIR);

    // Seed of the path hashes; compile_policy needs it.
    uint64_t path_seed() const;

    // Adds a container's entries; all or nothing. The policy entry goes last,
    // so the programs never see a container with half its rules.
    void install(const policy::CompiledPolicy& compiled);

    // Deletes the container's policy entry and the given keys; a no-op for
    // those that are gone already.
    void remove(const policy::PolicyKeys& keys);

    // Deletes every entry keyed by the cgroup id, looking through the whole
    // maps: for a container whose keys were not kept.
    void remove_by_scan(uint64_t cgroup_id);

    // True when the cgroup has a policy entry.
    bool installed(uint64_t cgroup_id) const;

    // Marks pid, the runtime's child entering the container of cgroup_id, as
    // a set-up task (cerb_setup_tasks): not judged as the agent until it
    // execs the container's program.
    void mark_setup_task(pid_t pid, uint64_t cgroup_id);

private:
    PolicyMaps() = default;
    static PolicyMaps open_pins(const std::string& pin_dir);

    UniqueFd policies_, net4_, net6_, paths_, config_, setup_tasks_;
};

} // namespace cerberus::bpf
