// SPDX-License-Identifier: Apache-2.0
#include "cgroup/systemd_scope.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/device_filter.hpp"

#include <sstream>

namespace cerberus::cgroups::systemd {

namespace {

// The process's cgroup2 path, from the "0::" line of /proc/PID/cgroup.
std::string unified_cgroup_of(pid_t pid)
{
    std::istringstream lines(files::read_file("/proc/" + std::to_string(pid) + "/cgroup"));
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("0::", 0) == 0)
            return line.substr(3);
    return "";
}

} // namespace

ScopePlan plan_scope(const std::string& cgroups_path, const std::string& container_id,
                     const spec::Resources* resources, const std::vector<spec::DeviceRule>& device_rules)
{
    static const spec::Resources no_resources;
    ScopePlan plan;
    plan.path = parse_scope_path(cgroups_path, container_id);
    Translation translation = translate_resources(resources ? *resources : no_resources);
    plan.files = std::move(translation.files);
    for (const auto& rule : device_rules)
        check_device_rule(rule);

    plan.properties = scope_properties(plan.path.slice, "cerberus container " + container_id);
    plan.properties.insert(plan.properties.end(), translation.properties.begin(), translation.properties.end());
    auto devices = device_properties(device_rules);
    plan.properties.insert(plan.properties.end(), devices.begin(), devices.end());
    return plan;
}

UnitGuard start_scope(Bus& bus, const ScopePlan& plan, pid_t pid)
{
    std::vector<UnitProperty> properties = plan.properties;
    properties.push_back({"PIDs", std::vector<uint32_t>{static_cast<uint32_t>(pid)}});
    bus.start_unit(plan.path.unit, properties);
    UnitGuard guard(bus, plan.path.unit);
    std::string actual = unified_cgroup_of(pid);
    if (actual != plan.path.cgroup)
        throw Error("systemd unit " + plan.path.unit + " put the container's init in cgroup \"" + actual +
                        "\", not \"" + plan.path.cgroup + "\"",
                    EIO);
    return guard;
}

} // namespace cerberus::cgroups::systemd
