#include "container/container.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/systemd_bus.hpp"

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
    if (st.systemd_unit.empty()) {
        cgroups::Cgroup::open(st.cgroup_path).apply(without_devices);
        return;
    }
    // What systemd owns changes through the unit, so that systemd keeps it; the rest through the files.
    cgroups::systemd::Translation translation = cgroups::systemd::translate_resources(without_devices);
    cgroups::Cgroup cgroup = cgroups::Cgroup::open(st.cgroup_path);
    if (!translation.properties.empty())
        cgroups::systemd::Bus::connect().set_properties(st.systemd_unit, translation.properties);
    cgroup.apply(translation.files);
}

} // namespace cerberus::container
