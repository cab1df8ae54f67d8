// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "cgroup/cgroup.hpp"

namespace cerberus::container {

std::vector<pid_t> processes(const RuntimeOptions& rt, const std::string& id)
{
    Opened c = open(rt.root, id, state::Store::Access::read);
    return cgroups::Cgroup::open(c.state.cgroup_path).pids();
}

} // namespace cerberus::container
