// SPDX-License-Identifier: Apache-2.0
// The DNS gate's part in the lifecycle (the gate itself: dns_gate_server.hpp).
// create registers a container whose policy names hosts and waits until the
// gate's sockets are bound in the container's network namespace; delete
// makes the gate forget it; state and list start a gate again when
// registrations are left and none runs (enforcement never waits on it: names
// only stop resolving while it is away).
#pragma once

#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::dns {

// The nameservers of the container's /etc/resolv.conf, read under root_fd
// (the container's root, never leaving it) before the agent can change it.
std::vector<std::string> container_nameservers(int root_fd);

// create, once the container's network namespace and mounts are in place and
// before the agent runs: writes the registration and has the gate serve it
// (egress_dir: where create put the egress proxy's CA for the container,
// when its policy has allowed_http).
// Throws, leaving no registration, when the gate cannot.
void register_container(const std::string& id, uint64_t cgroup_id, const std::string& trail,
                        const policy::Policy& policy, const std::vector<std::string>& nameservers,
                        const std::string& egress_dir);

// delete (and a failed create): the gate forgets the container, its
// registration and snapshot go. Never throws; nothing to do for a container
// that was never registered.
void forget_container(uint64_t cgroup_id) noexcept;

// state, list, create: a gate for the registrations left by one that died.
void restart_if_needed() noexcept;

// The admitted addresses of a container as state shows them
// ([{"name","address","ports","expires"}]); nullopt when the gate does not serve it.
std::optional<nlohmann::json> admitted(uint64_t cgroup_id);

} // namespace cerberus::dns
