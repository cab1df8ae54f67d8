// SPDX-License-Identifier: Apache-2.0
// cerberus-hook's two stages, for containers that runc or crun run: the same
// policy (policy/) and audit trail (audit/) as the runtime's, installed for
// the container's cgroup by a createRuntime hook and removed by a poststop
// hook. What the hook did is kept under its root (<root>/<id>/) for poststop,
// which runs after the runtime has removed the cgroup.
#pragma once

#include "base/runtime_options.hpp"

#include <sys/types.h>

#include <map>
#include <string>

namespace cerberus::hook {

// The OCI state a runtime writes on a hook's stdin.
struct ContainerState {
    std::string id;
    pid_t pid = 0;
    std::string bundle;
};

ContainerState parse_state(const std::string& json);

// createRuntime: the container's cgroup and namespaces exist, its process has
// not started. Resolves the bundle's policy as the runtime does; with none,
// does nothing. Fails closed (throws, so the runtime refuses the container)
// when the kernel cannot enforce the policy from here or the config lacks
// what the policy needs and a hook cannot change. rt.root is the hook's root.
void police(const RuntimeOptions& rt, const ContainerState& state);

// poststop: finishes the audit trail and removes what police installed; a
// no-op for a container police left alone.
void release(const RuntimeOptions& rt, const ContainerState& state);

} // namespace cerberus::hook
