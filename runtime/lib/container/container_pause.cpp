#include "container/container.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"

namespace cerberus::container {

void pause(const RuntimeOptions& rt, const std::string& id)
{
    state::ContainerDir dir = state::Store(rt.root).open(id);
    state::ContainerState st = dir.load();
    state::Status status = state::current_status(st, dir.fifo_path());
    if (status != state::Status::running && status != state::Status::created)
        throw Error("container not running", EINVAL);
    cgroups::Cgroup::open(st.cgroup_path).freeze();
}

void resume(const RuntimeOptions& rt, const std::string& id)
{
    state::ContainerDir dir = state::Store(rt.root).open(id);
    state::ContainerState st = dir.load();
    if (state::current_status(st, dir.fifo_path()) != state::Status::paused)
        throw Error("container not paused", EINVAL);
    cgroups::Cgroup::open(st.cgroup_path).thaw();
}

} // namespace cerberus::container
