// SPDX-License-Identifier: Apache-2.0
#include "cgroup/cgroup_path.hpp"

#include "base/error.hpp"

#include <algorithm>
#include <sstream>

namespace cerberus::cgroups {

std::string resolve_cgroups_path(const std::string& cgroups_path, const std::string& container_id)
{
    const std::string quoted = "cgroupsPath \"" + cgroups_path + "\"";
    if (!cgroups_path.empty() && cgroups_path.front() != '/' &&
        std::count(cgroups_path.begin(), cgroups_path.end(), ':') == 2)
        throw Error(quoted + " has the systemd form slice:prefix:name, which needs --systemd-cgroup", EINVAL);

    const std::string& raw = cgroups_path.empty() ? container_id : cgroups_path;
    std::string clean;
    std::istringstream components(raw);
    for (std::string component; std::getline(components, component, '/');) {
        if (component.empty() || component == ".")
            continue;
        if (component == "..")
            throw Error(quoted + ": \"..\" components are not allowed", EINVAL);
        clean += "/" + component;
    }
    if (clean.empty())
        throw Error(quoted + " names the root cgroup, which a container cannot own", EINVAL);
    return clean;
}

SubCgroups parse_sub_cgroups(const std::vector<std::string>& values)
{
    SubCgroups out;
    for (const auto& value : values) {
        size_t colon = value.find(':');
        if (colon != std::string::npos && value.find(':', colon + 1) != std::string::npos)
            throw Error("invalid --cgroup argument: " + value, EINVAL);
        if (colon == std::string::npos) {
            if (values.size() != 1)
                throw Error("invalid --cgroup argument: " + value + " (missing <controller>: prefix)", EINVAL);
            out[""] = value;
            continue;
        }
        std::istringstream controllers(value.substr(0, colon));
        for (std::string controller; std::getline(controllers, controller, ',');)
            out[controller] = value.substr(colon + 1);
    }
    return out;
}

std::string clean_sub_cgroup(const std::string& path)
{
    std::string clean;
    std::istringstream components(path);
    for (std::string component; std::getline(components, component, '/');) {
        if (component == "..")
            throw Error("--cgroup: " + path + " is not a sub cgroup path", EINVAL);
        if (!component.empty() && component != ".")
            clean += "/" + component;
    }
    return clean;
}

} // namespace cerberus::cgroups
