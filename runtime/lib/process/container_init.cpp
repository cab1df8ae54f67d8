// SPDX-License-Identifier: Apache-2.0
#include "process/container_init.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"
#include "process/console.hpp"
#include "process/hooks.hpp"
#include "process/namespaces.hpp"
#include "process/process_launch.hpp"
#include "process/rlimits.hpp"
#include "process/user.hpp"
#include "rootfs/mounts.hpp"
#include "rootfs/paths.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace cerberus::container {
namespace {

void join_namespaces(const spec::Linux& linux)
{
    for (const auto& ns : namespaces::joined_in_order(linux))
        if (!namespaces::for_children_only(ns.type)) // those the parent joined for us
            namespaces::join(namespaces::open(ns));
}

void set_hostname(const spec::Spec& spec)
{
    if (!spec.hostname.empty() && ::sethostname(spec.hostname.data(), spec.hostname.size()) != 0)
        throw_errno("sethostname " + spec.hostname);
    if (!spec.domainname.empty() && ::setdomainname(spec.domainname.data(), spec.domainname.size()) != 0)
        throw_errno("setdomainname " + spec.domainname);
}

// Through the container's procfs, crossing no symlink and no mount, into a
// file of procfs only: a mount or a symlink put on the way by the image or a
// racing container cannot send the write elsewhere (CVE-2025-52881).
void apply_sysctls(const spec::Linux& linux, const mounts::MountedRoot& rootfs)
{
    if (linux.sysctl.empty())
        return;
    UniqueFd proc = with_context("linux.sysctl", [&] { return rootfs.proc(); });
    for (const auto& [key, value] : linux.sysctl) {
        std::string path = "sys/" + key;
        for (size_t i = 4; i < path.size(); ++i)
            if (path[i] == '.')
                path[i] = '/';
        with_context("linux.sysctl " + key, [&] { mounts::write_proc(proc.get(), path, value); });
    }
}

// Blocks until `start` opens exec.fifo for reading, then tells it we are going.
// The write end stays open until execve closes it (O_CLOEXEC): `start` reads
// to end of file, so poststart hooks run only once the process has exec'd.
// proc is a procfs no name in the container leads to: a /proc another
// container sharing the root put in place cannot stand in for exec.fifo.
void wait_for_start(int fifo_fd, int proc)
{
    int fifo = with_context("open exec.fifo", [&] { return mounts::reopen(proc, fifo_fd, O_WRONLY).release(); });
    if (::write(fifo, "0", 1) != 1)
        throw_errno("write exec.fifo");
}

void set_up_container(const InitPlan& plan, SyncChannel& channel)
{
    const spec::Spec& spec = *plan.spec;
    const spec::Process& process = *spec.process;
    channel.expect(SyncMessage::parent_ready);
    cgroups::Cgroup::move_self_into_v1(plan.cgroup_v1_tasks); // its only thread
    join_namespaces(*spec.linux);
    // Only now, inside its cgroup, so the container sees that cgroup as its root.
    if (const spec::Namespace* cgroup_ns = spec.find_namespace("cgroup"); cgroup_ns && cgroup_ns->path.empty())
        check(::unshare(CLONE_NEWCGROUP), "unshare the cgroup namespace");
    if (plan.new_user_namespace) {
        if (::setresgid(0, 0, 0) != 0 || ::setresuid(0, 0, 0) != 0)
            throw_errno("become root in the new user namespace");
    }
    set_hostname(spec);
    if (plan.new_network_namespace)
        namespaces::bring_up_loopback();
    mounts::RootfsContext rootfs_ctx{spec,
                                     plan.rootfs,
                                     plan.new_mount_namespace,
                                     plan.in_user_namespace,
                                     plan.new_network_namespace,
                                     plan.cgroup_v1};
    mounts::MountedRoot rootfs = mounts::prepare_rootfs(rootfs_ctx);

    // The parent answers with the state JSON that the container's hooks get on stdin.
    channel.send(SyncMessage::run_hooks);
    std::string hook_state = channel.expect(SyncMessage::hooks_done).text;
    if (spec.hooks) {
        // From the container's root, as runc runs them: a hook may name the container's files relatively.
        check(::fchdir(rootfs.root()), "chdir to the rootfs for the createContainer hooks");
        hooks::run_all(spec.hooks->create_container, "createContainer", hook_state);
    }

    mounts::enter_rootfs(rootfs, plan.no_pivot, plan.new_mount_namespace);
    // The cwd may not exist yet: create it while root and before the rootfs
    // turns read-only, as runc does, inside the root (no /proc/self/fd/N).
    with_context("process.cwd " + process.cwd, [&] { rootfs.make(process.cwd, paths::Leaf::directory); });
    apply_sysctls(*spec.linux, rootfs); // before /proc/sys turns read-only
    // Before the masks and a read-only root: /dev/console may have to be made.
    if (plan.console_fd >= 0)
        console::setup_terminal(plan.console_fd, process.console_size, process.user.uid, &rootfs);
    mounts::finish_rootfs(spec, rootfs, plan.path_mounts);
    rootfs = {}; // its fds go before the process's own fds are dealt with
    // Before any path of the container's is resolved by name.
    launch::close_host_fds(
        {plan.preserve_fds, {channel.fd(), plan.fifo_fd, plan.landlock_ruleset_fd, plan.supervisor_fd}});
    // Read as root, before the user may lose the right to read /etc/passwd.
    const std::vector<std::string> env = user::environment_with_home(process.env, process.user.uid);
    if (!plan.no_new_keyring)
        launch::join_new_keyring();
    rlimits::apply(process.rlimits);
    // Before the spec's seccomp filter, which may refuse fsopen and openat2
    // (an older profile lists neither); reopening through it needs only openat.
    UniqueFd proc_for_fifo = plan.fifo_fd >= 0 ? mounts::private_proc() : UniqueFd();

    // As root, as runc, and before the spec's seccomp filter may go in: the
    // check asks getcwd, which a profile may refuse.
    launch::enter_working_dir(process.cwd);
    bool late_seccomp = launch::take_identity(process, plan.capabilities, plan.seccomp, channel.fd());
    std::string program = launch::lookup_path(process.args[0], env);

    channel.send(SyncMessage::child_ready);
    channel.close();
    if (plan.fifo_fd >= 0)
        wait_for_start(plan.fifo_fd, proc_for_fifo.get());
    proc_for_fifo = {};
    // Before the hooks that run in the container: they are held to all of it
    // (runc too runs them under the spec's seccomp filter).
    launch::restrict_self(plan.landlock_ruleset_fd, plan.landlock_flags);
    if (late_seccomp)
        seccomp::install(*plan.seccomp);
    if (plan.added_seccomp)
        launch::install_added_filter(*plan.added_seccomp, plan.supervisor_fd);
    if (spec.hooks)
        hooks::run_all(spec.hooks->start_container, "startContainer", hook_state);

    launch::exec_program(program, process.args, env);
}

} // namespace

void run_init(const InitPlan& plan, SyncChannel& channel)
{
    run_child("init", channel, [&] { set_up_container(plan, channel); });
}

} // namespace cerberus::container
