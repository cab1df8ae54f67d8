// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "cgroup/cgroup.hpp"
#include "cgroup/systemd_bus.hpp"

namespace cerberus::container {

void update(const RuntimeOptions& rt, const std::string& id, const spec::Resources& resources)
{
    Opened c = open(rt.root, id);
    c.require(state::Operation::update);
    // As runc: update never touches the device rules.
    spec::Resources without_devices = resources;
    without_devices.devices.clear();
    if (c.state.systemd_unit.empty()) {
        cgroups::Cgroup::open(c.state.cgroup_path).apply(without_devices);
        return;
    }
    // What systemd owns changes through the unit, so that systemd keeps it; the rest through the files.
    cgroups::systemd::Translation translation = cgroups::systemd::translate_resources(without_devices);
    cgroups::Cgroup cgroup = cgroups::Cgroup::open(c.state.cgroup_path);
    if (!translation.properties.empty())
        cgroups::systemd::Bus::connect().set_properties(c.state.systemd_unit, translation.properties);
    cgroup.apply(translation.files);
}

} // namespace cerberus::container
