// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "cgroup/cgroup.hpp"

namespace cerberus::container {

void update(const RuntimeOptions& rt, const std::string& id, const spec::Resources& resources)
{
    Opened c = open(rt.root, id);
    c.require(state::Operation::update);
    // As runc: update never touches the device rules.
    spec::Resources without_devices = resources;
    without_devices.devices.clear();
    cgroups::Cgroup::open(c.state.cgroup_path).apply(without_devices);
}

} // namespace cerberus::container
