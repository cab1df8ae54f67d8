#include "container/container.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"

namespace cerberus::container {

void update(const RuntimeOptions& rt, const std::string& id, const spec::Resources& resources)
{
    state::ContainerDir dir = state::Store(rt.root).open(id);
    state::ContainerState st = dir.load();
    state::Status status = state::current_status(st, dir.fifo_path());
    if (status == state::Status::stopped || status == state::Status::creating)
        throw Error("container not running", EINVAL);
    // As runc: update never touches the device rules.
    spec::Resources without_devices = resources;
    without_devices.devices.clear();
    cgroups::Cgroup::open(st.cgroup_path).apply(without_devices);
}

} // namespace cerberus::container
