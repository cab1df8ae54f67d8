// SPDX-License-Identifier: Apache-2.0
// The registry of policed containers: run_dir/containers/<cgroup id>, one
// JSON file each, written by create and removed when the collector finishes
// the container. The collector reads it to know whose events it collects;
// the dashboard reads it to know which containers are live.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cerberus::audit {

struct RegistryEntry {
    uint64_t cgroup_id = 0;
    std::string id;
    std::string trail;   // <audit dir>/<id>.jsonl
    std::string root;    // the state root (--root) the container lives under
    std::string enforcement; // the backend that enforces its policy, e.g. "bpf-lsm"
    nlohmann::json policy = nlohmann::json::object(); // the policy document it runs under
    bool audit_log = false; // some of its denials come through the kernel audit log (TrailStart)
    bool calls_observed = false; // TrailStart
    // Set for a brokered tool's call cgroup (audit::register_brokered_call): which tool and call, for each of
    // its events, written to the calling container's trail (id and trail are the container's). Null for a
    // container.
    nlohmann::json brokered;
    std::string cgroup_dir; // a brokered call's cgroup: the collector drops the entry once that is gone
};

// run_dir/containers
std::string registry_dir();

// registry_dir()/<cgroup id>
std::string registry_entry_path(uint64_t cgroup_id);

// Written atomically: readers see a whole entry or none.
void write_registry_entry(const RegistryEntry& entry);

// Every entry that reads whole; a damaged one is logged and left out.
std::vector<RegistryEntry> read_registry();

} // namespace cerberus::audit
