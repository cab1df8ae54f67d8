// SPDX-License-Identifier: Apache-2.0
// The command broker's files, host-wide, one set per layout like the DNS
// gate's and per wire (broker_wire.h: a build's shim speaks only its own): in
// run_dir, broker.lock, broker.sock, broker.log (base/daemon.hpp),
// containers/<cgroup id>.json (what create registers: the broker serves
// exactly these) and work/ (where a call's working directory is mounted, in
// the call's own mount namespace). Credentials are read from
// credentials_dir/<tool>.env, a host-side file no annotation names, as are a
// tool's policy (tool_policy.hpp) and the broker's configuration (decision_hook.hpp).
#pragma once

#include "base/daemon.hpp"
#include "broker/broker_wire.h"
#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::broker {

#define CERB_BROKER_RUN_ROOT "/run/cerberus-broker"
inline constexpr const char* run_root = CERB_BROKER_RUN_ROOT; // every layout's run_dir; hidden from the tools
inline constexpr const char* run_dir = CERB_BROKER_RUN_ROOT "/" CERB_LAYOUT_ID "-" CERBERUS_WIRE_NAME;
inline constexpr const char* credentials_dir = "/etc/cerberus/credentials";

daemon::Daemon broker_daemon();

struct Registration {
    std::string id;
    uint64_t cgroup_id = 0;
    std::string trail;      // the container's audit trail, where the broker appends its records
    bool audit = false;     // the policy's mode is audit: denied calls run, recorded as such
    std::string socket_dir; // on the host: the directory bound at container_socket_dir in the container
    policy::Commands commands;
};

nlohmann::json to_json(const Registration& registration);
Registration registration_from_json(const nlohmann::json& j); // throws on a malformed one

std::string registration_path(uint64_t cgroup_id);
void write_registration(const Registration& registration);
// Every readable registration but those skip names (a tick reads only the containers not served yet).
std::vector<Registration> read_registrations(const daemon::SkipCgroup& skip = {});
// Absent is fine.
void remove_registration(uint64_t cgroup_id);

} // namespace cerberus::broker
