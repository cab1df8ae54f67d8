// SPDX-License-Identifier: Apache-2.0
// The agent policy's part in the lifecycle: resolved and checked at create
// before anything touches the host, installed into the kernel maps keyed by
// the container's cgroup id before its init runs, removed at delete.
#pragma once

#include "base/runtime_options.hpp"
#include "oci/spec.hpp"
#include "policy/policy.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cerberus::policy_setup {

struct Prepared {
    std::optional<policy::Policy> policy;
    launch::ProcessConstraints forced; // on every process of the container
    bool active() const { return policy.has_value(); }
};

// Resolves the bundle's policy; when there is one, checks that the kernel can
// enforce it (fails closed otherwise) and applies what it forces to the
// spec's process.
Prepared prepare(const RuntimeOptions& rt, spec::Spec& spec);

// Adds the container's entries to the kernel maps and records their keys in
// keys_file (in the container's state dir) for remove.
void install(const Prepared& prepared, uint64_t cgroup_id, const std::string& keys_file);

// exec: pid, the runtime's child entering the container of cgroup_id, is not
// judged as the agent until it execs the container's program. Its setns,
// chroot and change of identity need capabilities the policy may forbid the
// agent (CAP_SYS_ADMIN, CAP_SETUID...); the program it execs is checked as
// the init's is.
void exempt_until_exec(pid_t pid, uint64_t cgroup_id);

// Removes what install added: the keys in keys_file, or, when that file is
// missing or damaged (a create that died midway), every entry of the cgroup.
void remove(uint64_t cgroup_id, const std::string& keys_file);

} // namespace cerberus::policy_setup
