// SPDX-License-Identifier: Apache-2.0
#include "container/exec.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup.hpp"
#include "container/container.hpp"
#include "container/container_policy.hpp"
#include "oci/spec_names.hpp"
#include "oci/spec_parse.hpp"
#include "process/capabilities.hpp"
#include "process/clone_into_cgroup.hpp"
#include "process/console.hpp"
#include "process/namespaces.hpp"
#include "process/process_launch.hpp"
#include "process/rlimits.hpp"
#include "process/sync_channel.hpp"
#include "process/user.hpp"
#include "seccomp/seccomp.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <optional>

namespace cerberus::container {
namespace {

// Everything the exec'd child needs, opened and compiled by the parent.
struct ExecPlan {
    const spec::Process* process = nullptr;
    std::vector<namespaces::Joinable> namespaces; // joined by the child, user first
    UniqueFd root;                       // the init's root directory
    int console_fd = -1;
    int preserve_fds = 0;
    std::optional<seccomp::CompiledSeccomp> seccomp;
    capabilities::CapabilitySets capabilities;
    int landlock_ruleset_fd = -1; // the policy's, as the init has them
    uint32_t landlock_flags = 0;
    std::optional<seccomp::CompiledSeccomp> added_seccomp;
    int supervisor_fd = -1; // where added_seccomp's listener goes, when it has one
    std::vector<int> cgroup_v1_tasks; // Cgroup::open_v1_tasks: the child moves itself in
};

bool same_namespace(const std::string& a, const std::string& b)
{
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

// The init's namespaces that differ from ours, opened in joining order;
// those that only apply to children (pid, time) go to for_children.
void open_namespaces(pid_t init, std::vector<namespaces::Joinable>& own,
                     std::vector<namespaces::Joinable>& for_children)
{
    for (const auto& kind : spec::namespace_kinds()) {
        std::string path = "/proc/" + std::to_string(init) + "/ns/" + kind.proc_name;
        if (!files::exists(path) || same_namespace(path, std::string("/proc/self/ns/") + kind.proc_name))
            continue;
        (namespaces::for_children_only(kind.type) ? for_children : own).push_back(namespaces::open({kind.type, path}));
    }
}

// Kills and reaps the child unless the exec got through.
struct ChildGuard {
    pid_t pid = 0;
    ~ChildGuard()
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

void enter_container(const ExecPlan& plan)
{
    for (const auto& ns : plan.namespaces)
        namespaces::join(ns);
    // Joining the mount namespace already moved us to its root; a container
    // without one of its own still has a root of its own.
    if (::fchdir(plan.root.get()) != 0 || ::chroot(".") != 0)
        throw_errno("chroot into the container's root");
}

void set_up_process(const ExecPlan& plan, SyncChannel& channel)
{
    const spec::Process& process = *plan.process;
    channel.expect(SyncMessage::parent_ready);
    cgroups::Cgroup::move_self_into_v1(plan.cgroup_v1_tasks); // its only thread
    enter_container(plan);
    launch::close_host_fds(
        {plan.preserve_fds, {channel.fd(), plan.landlock_ruleset_fd, plan.console_fd, plan.supervisor_fd}});
    const std::vector<std::string> env = user::environment_with_home(process.env, process.user.uid);
    if (plan.console_fd >= 0)
        console::setup_terminal(plan.console_fd, process.console_size, process.user.uid);
    launch::join_new_keyring();
    rlimits::apply(process.rlimits);
    // With no_new_privs the filter can wait until just before execve, so it
    // need not allow the syscalls of the set-up.
    // As root, as runc, and before the spec's seccomp filter may go in: the
    // check asks getcwd, which a profile may refuse.
    launch::enter_working_dir(process.cwd);
    bool late_seccomp = launch::take_identity(process, plan.capabilities, plan.seccomp, channel.fd());
    std::string program = launch::lookup_path(process.args[0], env);

    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    channel.send(SyncMessage::child_ready);
    channel.close();
    launch::restrict_self(plan.landlock_ruleset_fd, plan.landlock_flags);
    if (late_seccomp)
        seccomp::install(*plan.seccomp);
    if (plan.added_seccomp)
        launch::install_added_filter(*plan.added_seccomp, plan.supervisor_fd);
    launch::exec_program(program, process.args, env);
}

// The container's seccomp profile binds every process in it; the process's capabilities.
void compile_for_process(const RuntimeOptions& rt, const spec::Spec& spec, const std::string& config, ExecPlan& plan)
{
    if (spec.linux && spec.linux->seccomp)
        plan.seccomp = with_context(config, [&] {
            return seccomp::compile_cached(*spec.linux->seccomp, rt.root + "/seccomp-cache");
        });
    plan.capabilities = with_context("process.capabilities", [&] {
        return capabilities::parse_capabilities(plan.process->capabilities.value_or(spec::Capabilities{}));
    });
}

// The backend's part inside the container (a Landlock domain, a seccomp
// filter), rebuilt from the policy the container was created with and bound
// to its root, which is in place.
void apply_policy(ContainerPolicy& policy, const spec::Spec& spec, const std::string& config, ExecPlan& plan)
{
    const policy::ProcessRestrictions& restrictions = policy.restrict_processes(spec, plan.seccomp, config);
    policy.after_mounts(plan.root.get());
    plan.landlock_ruleset_fd = restrictions.landlock_ruleset.get();
    plan.landlock_flags = restrictions.landlock_flags;
    plan.added_seccomp = restrictions.seccomp;
    plan.supervisor_fd = policy.supervisor_fd();
}

// The terminal's connection, kept open until the child has its copy.
UniqueFd connect_console(const ExecOptions& opts, ExecPlan& plan)
{
    UniqueFd console;
    if (plan.process->terminal && opts.console_fd >= 0) {
        plan.console_fd = opts.console_fd;
    } else if (plan.process->terminal) {
        console = console::connect_socket(opts.console_socket);
        plan.console_fd = console.get();
    }
    return console;
}

void validate_process(const spec::Process& process)
{
    if (process.args.empty())
        throw Error("process args cannot be empty", EINVAL);
    if (process.cwd.empty())
        throw Error("cwd property must not be empty", EINVAL);
    if (process.cwd[0] != '/')
        throw Error("cwd must be an absolute path", EINVAL);
}

} // namespace

spec::Process load_process_file(const std::string& path)
{
    nlohmann::json process;
    try {
        process = nlohmann::json::parse(files::read_file(path));
    } catch (const nlohmann::json::parse_error& e) {
        throw Error(path + ": invalid JSON: " + e.what(), EINVAL);
    }
    return *with_context(path, [&] { return spec::parse({{"process", process}}).process; });
}

spec::Process config_process(const RuntimeOptions& rt, const std::string& id)
{
    state::ContainerState st = open(rt.root, id, state::Store::Access::read).state;
    spec::Spec spec = spec::load_bundle(st.bundle);
    if (!spec.process)
        throw Error(st.bundle + "/config.json: process: missing", EINVAL);
    return *spec.process;
}

pid_t exec(const RuntimeOptions& rt, const ExecOptions& opts)
{
    spec::Process process = opts.process;
    validate_process(process);
    if (process.terminal && opts.console_socket.empty() && opts.console_fd < 0)
        throw Error("process.terminal is true but --console-socket is not set", EINVAL);

    // Not locked: a foreground exec may last as long as the container.
    Opened c = open(rt.root, opts.id, state::Store::Access::read);
    if (!(opts.ignore_paused && c.status == state::Status::paused))
        c.require(state::Operation::exec);
    const state::ContainerState& st = c.state;
    // Before anything is set up: a wrong --cgroup leaves nothing behind.
    cgroups::Cgroup cgroup = cgroups::Cgroup::open(st.cgroup_path).for_process_in(opts.sub_cgroups);
    // The policy binds this process as it binds the init, whatever the config or the flags say.
    st.forced.apply_to(process);
    ContainerPolicy policy = ContainerPolicy::adopt(st, c.dir);

    ExecPlan plan;
    plan.process = &process;
    plan.preserve_fds = opts.preserve_fds;
    spec::Spec spec = spec::load_bundle(st.bundle);
    compile_for_process(rt, spec, st.bundle + "/config.json", plan);

    std::vector<namespaces::Joinable> for_children;
    open_namespaces(st.pid, plan.namespaces, for_children);
    std::string root = "/proc/" + std::to_string(st.pid) + "/root";
    plan.root = UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!plan.root)
        throw_errno("open " + root);
    apply_policy(policy, spec, st.bundle + "/config.json", plan);
    // Checked again now that they are open: had the pid been reused since
    // the status check, they would be another process's.
    if (!state::process_matches(st))
        throw state::refusal(state::Operation::exec, state::Status::stopped, opts.id);
    std::vector<UniqueFd> v1_tasks = cgroup.open_v1_tasks();
    for (const auto& fd : v1_tasks)
        plan.cgroup_v1_tasks.push_back(fd.get());

    UniqueFd console = connect_console(opts, plan);

    auto [parent_end, child_end] = SyncChannel::pair();
    ChildGuard child;
    ClonedChild cloned{};
    {
        namespaces::ForChildren pid_namespace(for_children);
        cloned = clone_into_cgroup(0, &cgroup);
        child.pid = cloned.pid;
    }
    if (child.pid == 0) {
        parent_end.close();
        run_child("exec", child_end, [&] { set_up_process(plan, child_end); });
    }
    child_end.close();

    v1_tasks.clear();
    cgroup.add_process(child.pid, cloned.placed, cgroups::Cgroup::V1::moved_itself);
    policy.exempt_until_exec(child.pid); // before the child does anything in the container
    if (process.oom_score_adj)
        files::write_file("/proc/" + std::to_string(child.pid) + "/oom_score_adj",
                          std::to_string(*process.oom_score_adj));
    parent_end.send(SyncMessage::parent_ready);
    if (plan.seccomp && plan.seccomp->has_listener()) {
        UniqueFd listener = parent_end.receive_fd();
        const auto& sc = *spec.linux->seccomp;
        seccomp::send_listener(listener.get(), sc.listener_path, state::oci_state_json(st, state::Status::running),
                               sc.listener_metadata);
    }
    parent_end.expect(SyncMessage::child_ready);
    if (!opts.pid_file.empty())
        files::write_file_atomic(opts.pid_file, std::to_string(child.pid), 0644);
    return std::exchange(child.pid, 0);
}

} // namespace cerberus::container
