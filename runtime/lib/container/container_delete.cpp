// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/systemd_bus.hpp"
#include "container/container_policy.hpp"
#include "process/hooks.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cerberus::container {
namespace {

// SIGKILLs every process of the container and waits until the init is gone.
void kill_and_wait(const state::ContainerState& st, cgroups::Cgroup& cgroup)
{
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, st.pid, 0)));
    bool init_ours = pidfd && state::process_matches(st);
    cgroup.kill_all(SIGKILL);
    if (init_ours) {
        ::syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
        struct pollfd p = {pidfd.get(), POLLIN, 0};
        ::poll(&p, 1, 10000);
    }
}

} // namespace

void remove(const RuntimeOptions& rt, const std::string& id, bool force)
{
    std::optional<Opened> c;
    try {
        c.emplace(open(rt.root, id));
    } catch (const Error& e) {
        if (force && e.errnum() == ENOENT)
            return;
        throw;
    }
    const state::ContainerState& st = c->state;
    if (!force)
        c->require(state::Operation::remove);
    cgroups::Cgroup cgroup = cgroups::Cgroup::open(st.cgroup_path);
    if (c->status != state::Status::stopped)
        kill_and_wait(st, cgroup);
    ContainerPolicy::adopt(st, c->dir).retire();
    // systemd removes the scope's cgroup as the unit stops; destroy removes what is left.
    if (!st.systemd_unit.empty())
        cgroups::systemd::Bus::connect().stop_unit(st.systemd_unit);
    cgroup.destroy();
    hooks::run_all_warning_on_failure(st.hooks.poststop, "poststop", state::oci_state_json(st, state::Status::stopped));
    c->dir.remove();
}

} // namespace cerberus::container
