// SPDX-License-Identifier: Apache-2.0
// Landlock, the file and exec half of the landlock backend: the rights a
// policy grants, graded by the ABI the kernel has, turned into a ruleset whose
// rules are bound to the objects the container's paths name when it starts.
#pragma once

#include "base/fd.hpp"
#include "policy/policy.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cerberus::landlock {

// The kernel's Landlock ABI version; 0 when it has none (or it is disabled).
int abi_version();

struct Grant {
    std::string path; // as the container sees it
    uint64_t access;  // LANDLOCK_ACCESS_FS_* (file-only rights kept for files)
};

struct RulesetPlan {
    uint64_t handled = 0; // rights the ruleset governs; 0 and no scope: no ruleset at all
    uint64_t scoped = 0;  // LANDLOCK_SCOPE_* (ABI 6): what the domain may not reach outside itself
    std::vector<Grant> grants;
    bool grant_interpreters = false; // allowed_bins: their ELF interpreters get the execute right too

    bool wanted() const { return handled != 0 || scoped != 0; }
};

// Pure: what a policy asks of Landlock at this ABI.
RulesetPlan plan_ruleset(const policy::Policy& policy, int abi);

// The first ABI whose domains keep signals inside themselves (LANDLOCK_SCOPE_SIGNAL).
inline constexpr int signal_scope_abi = 6;

// Pure: plan confined to its domain, for a container that shares a pid
// namespace with processes outside it. A domain's processes may trace, and
// reach through ptrace's checks (/proc/<pid>/mem, process_vm_writev,
// pidfd_getfd), only processes in it or below it (every ABI); from ABI 6 they
// may signal only those too. False when this ABI cannot do the signals.
bool confine_to_domain(RulesetPlan& plan, int abi);

// An empty ruleset governing plan.handled, scoped to plan.scoped.
UniqueFd create_ruleset(const RulesetPlan& plan);

// Adds the plan's rules, each path resolved inside root_fd as if it were "/"
// (symlinks included). A path that does not exist grants nothing and is skipped.
void add_rules(int ruleset_fd, const RulesetPlan& plan, int root_fd);

// Grants what the plan grants an allowed_paths entry (reading and writing, and
// running unless allowed_bins names the programs) beneath the directory open
// at dir_fd: a place no path names where the ruleset is made (the command
// broker's tool sees the agent's directory in a mount namespace of its own).
void allow_directory(int ruleset_fd, const RulesetPlan& plan, int dir_fd);

// landlock_restrict_self flags (ABI 7): the domain's denials logged after exec
// too, those of domains nested in it not.
uint32_t restrict_flags(int abi);

} // namespace cerberus::landlock
