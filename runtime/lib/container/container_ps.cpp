#include "container/container.hpp"

#include "cgroup/cgroup.hpp"

namespace cerberus::container {

std::vector<pid_t> processes(const RuntimeOptions& rt, const std::string& id)
{
    state::ContainerState st = state::Store(rt.root).open(id, state::Store::Access::read).load();
    return cgroups::Cgroup::open(st.cgroup_path).pids();
}

} // namespace cerberus::container
