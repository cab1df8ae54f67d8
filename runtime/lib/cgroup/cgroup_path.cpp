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

} // namespace cerberus::cgroups
