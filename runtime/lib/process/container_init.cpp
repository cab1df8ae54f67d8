// SPDX-License-Identifier: Apache-2.0
#include "process/container_init.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "process/console.hpp"
#include "process/hooks.hpp"
#include "process/namespaces.hpp"
#include "process/process_launch.hpp"
#include "process/rlimits.hpp"
#include "process/user.hpp"
#include "rootfs/mounts.hpp"

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

void apply_sysctls(const spec::Linux& linux)
{
    for (const auto& [key, value] : linux.sysctl) {
        std::string path = "/proc/sys/" + key;
        for (size_t i = 10; i < path.size(); ++i)
            if (path[i] == '.')
                path[i] = '/';
        with_context("linux.sysctl " + key, [&] { files::write_file(path, value); });
    }
}

// Blocks until `start` opens exec.fifo for reading, then tells it we are going.
// The write end stays open until execve closes it (O_CLOEXEC): `start` reads
// to end of file, so poststart hooks run only once the process has exec'd.
void wait_for_start(int fifo_fd)
{
    std::string path = "/proc/self/fd/" + std::to_string(fifo_fd);
    int fifo = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fifo < 0)
        throw_errno("open exec.fifo");
    if (::write(fifo, "0", 1) != 1)
        throw_errno("write exec.fifo");
}

void set_up_container(const InitPlan& plan, SyncChannel& channel)
{
    const spec::Spec& spec = *plan.spec;
    const spec::Process& process = *spec.process;
    channel.expect(SyncMessage::parent_ready);
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
    mounts::prepare_rootfs(rootfs_ctx);

    // The parent answers with the state JSON that the container's hooks get on stdin.
    channel.send(SyncMessage::run_hooks);
    std::string hook_state = channel.expect(SyncMessage::hooks_done).text;
    if (spec.hooks)
        hooks::run_all(spec.hooks->create_container, "createContainer", hook_state);

    mounts::enter_rootfs(plan.rootfs, plan.no_pivot, plan.new_mount_namespace);
    // Before any path of the container's is resolved, the cwd's first.
    launch::close_host_fds(
        {plan.preserve_fds, {channel.fd(), plan.fifo_fd, plan.landlock_ruleset_fd, plan.console_fd, plan.supervisor_fd}});
    // The cwd may not exist yet: create it while root and before the rootfs
    // turns read-only, as runc does.
    with_context("process.cwd", [&] { files::make_dirs(process.cwd); });
    apply_sysctls(*spec.linux); // before /proc/sys turns read-only
    mounts::finish_rootfs(spec, plan.path_mounts);
    // Read as root, before the user may lose the right to read /etc/passwd.
    const std::vector<std::string> env = user::environment_with_home(process.env, process.user.uid);
    if (plan.console_fd >= 0)
        console::setup_terminal(plan.console_fd, process.console_size);
    if (!plan.no_new_keyring)
        launch::join_new_keyring();
    rlimits::apply(process.rlimits);

    bool late_seccomp = launch::take_identity(process, plan.capabilities, plan.seccomp, channel.fd());
    launch::enter_working_dir(process.cwd);
    std::string program = launch::lookup_path(process.args[0], env);

    channel.send(SyncMessage::child_ready);
    channel.close();
    if (plan.fifo_fd >= 0)
        wait_for_start(plan.fifo_fd);
    // Before the hooks that run in the container: they are held to it too.
    launch::restrict_self(plan.landlock_ruleset_fd, plan.landlock_flags);
    if (spec.hooks)
        hooks::run_all(spec.hooks->start_container, "startContainer", hook_state);
    if (late_seccomp)
        seccomp::install(*plan.seccomp);
    if (plan.added_seccomp)
        launch::install_added_filter(*plan.added_seccomp, plan.supervisor_fd);

    launch::exec_program(program, process.args, env);
}

} // namespace

void run_init(const InitPlan& plan, SyncChannel& channel)
{
    run_child("init", channel, [&] { set_up_container(plan, channel); });
}

} // namespace cerberus::container
