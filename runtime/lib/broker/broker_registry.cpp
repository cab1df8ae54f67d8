// SPDX-License-Identifier: Apache-2.0
#include "broker/broker_registry.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "base/served_containers.hpp"
#include "policy/policy_commands.hpp"

#include <unistd.h>

namespace cerberus::broker {

daemon::Daemon broker_daemon()
{
    return {run_dir, "broker", "command-broker", "the command broker"};
}

nlohmann::json to_json(const Registration& registration)
{
    policy::Policy commands_only;
    commands_only.commands = registration.commands;
    return {{"id", registration.id},
            {"cgroup_id", registration.cgroup_id},
            {"trail", registration.trail},
            {"audit", registration.audit},
            {"socket_dir", registration.socket_dir},
            {"commands", policy::write_commands(commands_only)}};
}

Registration registration_from_json(const nlohmann::json& j)
{
    Registration registration;
    registration.id = j.at("id").get<std::string>();
    registration.cgroup_id = j.at("cgroup_id").get<uint64_t>();
    registration.trail = j.at("trail").get<std::string>();
    registration.audit = j.at("audit").get<bool>();
    registration.socket_dir = j.at("socket_dir").get<std::string>();
    policy::Policy commands_only;
    policy::parse_commands(j.at("commands"), "commands", commands_only); // checked again: the broker trusts no file blindly
    registration.commands = std::move(commands_only.commands);
    return registration;
}

std::string registration_path(uint64_t cgroup_id)
{
    return daemon::registration_file(run_dir, cgroup_id);
}

void write_registration(const Registration& registration)
{
    daemon::write_registration_file(run_dir, registration.cgroup_id, to_json(registration));
}

std::vector<Registration> read_registrations(const daemon::SkipCgroup& skip)
{
    return daemon::read_registrations(std::string(run_dir) + "/containers", registration_from_json, skip);
}

void remove_registration(uint64_t cgroup_id)
{
    std::string path = registration_path(cgroup_id);
    if (unlink(path.c_str()) < 0 && errno != ENOENT)
        throw_errno("removing " + path);
}

} // namespace cerberus::broker
