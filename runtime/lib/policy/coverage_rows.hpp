// SPDX-License-Identifier: Apache-2.0
// The rows of the coverage table: what a backend enforces, reports and can
// audit is said per row, and a policy's rule lists (rule_lists.hpp) say which
// rows they bring. Apart from enforcement.hpp so that the rule lists need
// none of the backends.
#pragma once

namespace cerberus::policy {

// Rows of the coverage table (`cerberus check`, docs/policy.md).
enum class RuleKind {
    allowed_hosts,   // connect and sendto/sendmsg destinations, v4, v6, v4-mapped
    raw_sockets,     // raw, packet and other non-IP sockets under allowed_hosts
    paths,           // opens under allowed_paths / read_only_paths
    path_changes,    // link, rename, unlink, mkdir, truncate, chmod outside the allowed
    denied_paths,    // never reachable, even under an allowed prefix
    unix_sockets,    // AF_UNIX connects by path
    allowed_bins,    // exec of unlisted files, memfds included
    exec_mappings,   // PROT_EXEC mappings of unlisted files (the loader run directly)
    forbidden_caps,  // capabilities never usable
    escalation,      // bpf, perf_event_open, modules, kexec, new user namespaces, mounts
    cgroup_exit,     // the agent leaving its container's cgroup, where the policy is bound
    other_processes, // processes outside the container (ptrace, memory, signals, fds), keyrings, userfaultfd
};
inline constexpr RuleKind all_rule_kinds[] = {
    RuleKind::allowed_hosts, RuleKind::raw_sockets,  RuleKind::paths,         RuleKind::path_changes,
    RuleKind::denied_paths,  RuleKind::unix_sockets, RuleKind::allowed_bins, RuleKind::exec_mappings,
    RuleKind::forbidden_caps, RuleKind::escalation,  RuleKind::cgroup_exit,  RuleKind::other_processes,
};
const char* rule_kind_name(RuleKind kind);

} // namespace cerberus::policy
