// SPDX-License-Identifier: Apache-2.0
// The agent policy's part before anything touches the host: the bundle's
// policy resolved, its backend chosen (failing closed when this host cannot
// enforce it, or the backend cannot carry out one of its rules), compiled
// once, and what it forces applied to the spec. container/container_policy
// owns the rest of its life.
#pragma once

#include "base/runtime_options.hpp"
#include "oci/spec.hpp"
#include "policy/enforcement.hpp"
#include "policy/policy.hpp"
#include "policy/policy_compile.hpp"

#include <optional>
#include <string>

namespace cerberus::policy_setup {

struct Prepared {
    std::optional<policy::Policy> policy;
    policy::BackendChoice choice; // the backend and its coverage, asked once
    policy::CompiledPolicy compiled; // keyed by the cgroup at install (assign_cgroup)
    launch::ProcessConstraints forced; // on every process of the container
    bool active() const { return policy.has_value(); }
};

// rt.enforcement as a backend kind; throws naming the flag for an unknown one.
policy::Enforcement requested_enforcement(const RuntimeOptions& rt);

// The bundle's policy (annotation, policy dir, default, --lock-policy), or nullopt.
std::optional<policy::Policy> resolve(const RuntimeOptions& rt, const spec::Spec& spec);

// Chooses and checks the backend for a resolved policy, compiles it and
// applies it to the spec.
Prepared prepare(const RuntimeOptions& rt, policy::Policy policy, spec::Spec& spec, const std::string& rootfs);

// Resolves the bundle's policy; when there is one, chooses and checks the
// backend, compiles the policy and applies it to the spec (what it forces on
// the spec's process among it).
Prepared prepare(const RuntimeOptions& rt, spec::Spec& spec, const std::string& rootfs);

// The policy a container was created with (policy_document, kept in its state dir).
policy::Policy load_saved(const std::string& file);

} // namespace cerberus::policy_setup
