// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "cgroup/cgroup.hpp"

namespace cerberus::container {

void pause(const RuntimeOptions& rt, const std::string& id)
{
    Opened c = open(rt.root, id);
    c.require(state::Operation::pause);
    cgroups::Cgroup::open(c.state.cgroup_path).freeze();
}

void resume(const RuntimeOptions& rt, const std::string& id)
{
    Opened c = open(rt.root, id);
    c.require(state::Operation::resume);
    cgroups::Cgroup::open(c.state.cgroup_path).thaw();
}

} // namespace cerberus::container
