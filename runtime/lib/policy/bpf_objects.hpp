// SPDX-License-Identifier: Apache-2.0
// What the BPF-based backends share on a host (the pin directory and its
// program groups are kernel/pin_dir's): the maps every program object reuses
// by name (libbpf's pinning, layouts checked first), the config entry written
// once by whoever creates the maps, and a container's map entries, added in
// create and removed in delete.
#pragma once

#include "base/fd.hpp"
#include "kernel/pin_dir.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/policy_compile.hpp"
#include "policy/policy_keys.hpp"

#include <bpf/libbpf.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cerberus::bpf {

// Open options that make an object reuse (or create and pin) the shared maps.
bpf_object_open_opts shared_map_options();

// Writes the config entry (path seed, host network namespace) unless a
// loader did already. Under PinDirLock.
void initialize_config(const std::string& pin_dir = CERB_PIN_DIR);

// libbpf's messages (the verifier log among them) go to the debug log.
void forward_libbpf_messages();

// The policy maps of the pinned set.
class PolicyMaps {
public:
    // nullopt when nothing is pinned (nothing to remove).
    static std::optional<PolicyMaps> open_pinned(const std::string& pin_dir = CERB_PIN_DIR);

    // Seed of the path hashes; compile_policy needs it.
    uint64_t path_seed() const;

    // Adds a container's entries; all or nothing. The policy entry goes last,
    // so the programs never see a container with half its rules.
    void install(const policy::CompiledPolicy& compiled);

    // Deletes the container's policy entry and the given keys; a no-op for
    // those that are gone already. Then the addresses the DNS gate admitted
    // for it, whether or not the gate still runs (remove_names).
    void remove(const policy::PolicyKeys& keys);

    // Deletes every entry keyed by the cgroup id, looking through the whole
    // maps: for a container whose keys were not kept.
    void remove_by_scan(uint64_t cgroup_id);

    // Deletes every CERB_MAP_NAMES entry of the cgroup (the gate writes them,
    // so no record of their keys exists: the whole map is looked through) and
    // its CERB_MAP_DNS_GATES entry.
    void remove_names(uint64_t cgroup_id);

    // True when the cgroup has a policy entry.
    bool installed(uint64_t cgroup_id) const;

private:
    PolicyMaps() = default;

    UniqueFd policies_, net4_, net6_, paths_, config_, names_, dns_gates_;
};

// Marks pid, the runtime's process in the container of cgroup_id, as a set-up
// task (CERB_MAP_SETUP_TASKS of pin_dir): not judged as the agent until it
// execs the container's program. Opens that map alone: a create pays for one
// pinned object, not the whole set.
void mark_setup_task(const std::string& pin_dir, pid_t pid, uint64_t cgroup_id);

// A container's entries, with their keys recorded in keys_file first (so no
// entry is ever without its record), its policy entry marked with the backend
// whose programs enforce it (CERB_BACKEND_*: the others leave it alone), and
// their removal: the recorded keys, or, when the record is missing or damaged
// (a create that died midway), every entry of the cgroup. pin_dir is the one
// the container's state records: when a build of another layout pinned it and
// its maps do not fit this build's, only the container's policy entry (keyed
// by the cgroup id in every layout) goes, which stops its rules; the rest
// stays until that pin dir is removed.
void install_entries(const policy::CompiledPolicy& compiled, const std::string& keys_file, uint32_t backend_flag);
void remove_entries(uint64_t cgroup_id, const std::string& keys_file, const std::string& pin_dir = CERB_PIN_DIR);

} // namespace cerberus::bpf
