// The agent policy's part in the lifecycle: resolved and checked at create
// before anything touches the host, installed into the kernel maps keyed by
// the container's cgroup id before its init runs, removed at delete.
#pragma once

#include "policy.hpp"
#include "runtime_options.hpp"
#include "spec.hpp"

#include <cstdint>
#include <optional>

namespace cerberus::policy_setup {

struct Prepared {
    std::optional<policy::Policy> policy;
    bool active() const { return policy.has_value(); }
};

// Resolves the bundle's policy; when there is one, checks that the kernel can
// enforce it (fails closed otherwise) and applies it to the spec.
Prepared prepare(const RuntimeOptions& rt, spec::Spec& spec);

void install(const Prepared& prepared, uint64_t cgroup_id);
void remove(uint64_t cgroup_id);

} // namespace cerberus::policy_setup
