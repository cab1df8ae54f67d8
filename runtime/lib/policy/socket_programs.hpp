// SPDX-License-Identifier: Apache-2.0
// The cgroup socket programs (bpf/cerberus_sock.bpf.c): loaded once per host
// and pinned, attached to each policed container's cgroup v2 directory with
// BPF_F_ALLOW_MULTI (they run for the whole subtree, and a nested cgroup can
// only add programs, never replace them), told whose container they run for
// through per-attachment storage, detached at delete.
#pragma once

#include <cstdint>
#include <string>

namespace cerberus::socket_programs {

// Loads and pins them unless pinned already, and keeps one attachment of each
// on an empty cgroup (<cgroup2>/cerberus-sock-hooks), so the kernel's socket
// hooks stay on between containers; throws saying what the kernel refused.
void ensure_loaded();

bool loaded();

// Which programs a backend attaches: all of them for a policy with host names
// (only these programs steer DNS queries to the gate, give its answers their
// source and refuse binding the DNS port); without names, those that judge
// sockets and addresses for the landlock backend, which has no hooks of its
// own; or only the egress program, which judges where packets really go
// (options, routing headers, tunnels), for the backends whose hooks judge addresses.
enum class Set { every, addresses, egress };

// Attaches the set's programs to the cgroup directory and records cgroup_id
// as their owner; all or nothing.
void attach(int cgroup_dir_fd, uint64_t cgroup_id, Set set);

// Detaches the programs pinned in pin_dir (the container's, from its state),
// whichever set was attached; a no-op for those not attached (or nothing
// pinned there).
void detach(int cgroup_dir_fd, const std::string& pin_dir);

} // namespace cerberus::socket_programs
