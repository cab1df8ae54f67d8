// SPDX-License-Identifier: Apache-2.0
#include "process/clone_into_cgroup.hpp"

#include "base/error.hpp"

#include <errno.h>
#include <linux/sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cerberus {

ClonedChild clone_into_cgroup(uint64_t flags, const cgroups::Cgroup* cgroup)
{
    ClonedChild child{-1, cgroups::Cgroup::Placed::in_unified};
    if (cgroup) {
        UniqueFd cgroup_dir = cgroup->open_unified_dir(); // close-on-exec; the child closes it as it execs
        clone_args args{};
        args.flags = flags | CLONE_INTO_CGROUP;
        args.exit_signal = SIGCHLD;
        args.cgroup = static_cast<uint64_t>(cgroup_dir.get());
        child.pid = static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof(args)));
    }
    if (!cgroup || (child.pid < 0 && (errno == ENOSYS || errno == E2BIG || errno == EINVAL))) { // before Linux 5.7
        child.pid = static_cast<pid_t>(::syscall(SYS_clone, flags | SIGCHLD, nullptr, nullptr, nullptr, nullptr));
        child.placed = cgroups::Cgroup::Placed::nowhere;
    }
    if (child.pid < 0)
        throw_errno(cgroup ? "clone into cgroup " + cgroup->unified_dir() : std::string("clone"));
    return child;
}

} // namespace cerberus
