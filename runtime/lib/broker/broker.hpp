// SPDX-License-Identifier: Apache-2.0
// The command broker's part in the lifecycle (the broker itself:
// broker_server.hpp). decide adds the mounts a policy with commands needs: the
// shim, read-only, at each tool's name in the usual PATH directories, and the
// container's socket directory at container_socket_dir; create registers the
// container once its mounts are in place and waits until the broker listens;
// delete makes the broker forget it.
#pragma once

#include "oci/spec.hpp"
#include "policy/policy.hpp"

#include <cstdint>
#include <string>

namespace cerberus::broker {

// The shim on the host: $CERBERUS_SHIM, else cerberus-shim in libexec/cerberus
// of the install prefix.
std::string shim_path();

// The host directory bound at container_socket_dir: <state dir>/broker.
std::string socket_dir(const std::string& state_dir);

// The mounts of a policy with commands, appended to spec.mounts (after the
// bundle's own, so none of them covers the shim): for each tool, the shim at
// /usr/bin/<tool> and over every other entry of that name the rootfs has in
// the usual PATH directories, and the socket directory. Throws, naming
// policy.commands, when the shim is missing.
void add_mounts(const policy::Policy& policy, spec::Spec& spec, const std::string& rootfs,
                const std::string& state_dir);

// create (install): the socket directory, before the init mounts it.
void make_socket_dir(const std::string& state_dir);

// create, once the container's mounts are in place and before the agent runs:
// writes the registration and has the broker listen on the container's socket.
// Throws, leaving no registration, when it cannot.
void register_container(const std::string& id, uint64_t cgroup_id, const std::string& trail,
                        const policy::Policy& policy, const std::string& state_dir);

// delete (and a failed create). Never throws.
void forget_container(uint64_t cgroup_id) noexcept;

// state, list, create: a broker for the registrations left by one that died.
void restart_if_needed() noexcept;

} // namespace cerberus::broker
