// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/device_filter.hpp"
#include "cgroup/systemd_scope.hpp"
#include "container/container_policy.hpp"
#include "kernel/pinned_maps.hpp"
#include "oci/spec_parse.hpp"
#include "oci/spec_validate.hpp"
#include "policy/policy_setup.hpp"
#include "process/clone_into_cgroup.hpp"
#include "process/console.hpp"
#include "process/container_init.hpp"
#include "process/hooks.hpp"
#include "process/namespaces.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <filesystem>

namespace cerberus::container {
namespace {

std::string real_path(const std::string& path, const std::string& what)
{
    char buf[PATH_MAX];
    if (!::realpath(path.c_str(), buf))
        throw_errno(what + " " + path);
    return buf;
}

// Undoes a half-done create, newest step first.
class CreateRollback {
public:
    ~CreateRollback()
    {
        if (!armed)
            return;
        if (init_pid > 0) {
            ::kill(init_pid, SIGKILL);
            ::waitpid(init_pid, nullptr, 0);
        }
        policy.reset(); // its entries only: the container never registered a trail worth finishing
        try {
            if (cgroup)
                cgroup->destroy();
            if (dir)
                dir->remove();
        } catch (const Error& e) {
            spdlog::warn("cleaning up after a failed create: {}", e.what());
        }
    }

    bool armed = true;
    pid_t init_pid = 0;
    std::optional<PolicyGuard> policy;
    cgroups::Cgroup* cgroup = nullptr;
    state::ContainerDir* dir = nullptr;
};

ClonedChild clone_init(uint64_t flags, const cgroups::Cgroup* cgroup, const InitPlan& plan, SyncChannel& parent_end,
                       SyncChannel& child_end, int lock_fd)
{
    ClonedChild init = clone_into_cgroup(flags, cgroup);
    if (init.pid == 0) {
        parent_end.close();
        ::close(lock_fd);
        run_init(plan, child_end);
    }
    child_end.close();
    return init;
}

void write_pid_file(const std::string& path, pid_t pid)
{
    files::write_file_atomic(path, std::to_string(pid), 0644);
}

} // namespace

pid_t create(const RuntimeOptions& rt, const CreateOptions& opts)
{
    state::validate_id(opts.id);
    // Named from the caller's directory, as runc takes it: create changes into the bundle before writing it.
    std::string pid_file = opts.pid_file.empty() ? "" : std::filesystem::absolute(opts.pid_file).string();
    std::string bundle = real_path(opts.bundle, "bundle");
    spec::Spec spec = spec::load_bundle(bundle);
    std::string config = bundle + "/config.json";
    std::string rootfs = with_context(config, [&] {
        std::string path = spec::resolve_rootfs(spec, bundle);
        spec::validate(spec, path);
        return real_path(path, "root.path");
    });
    if (opts.listen_fds > 0) {
        spec.process->env.push_back("LISTEN_FDS=" + std::to_string(opts.listen_fds));
        spec.process->env.push_back("LISTEN_PID=1");
    }
    const spec::Process& process = *spec.process;
    if (process.terminal && opts.console_socket.empty() && opts.console_fd < 0)
        throw Error(config + ": process.terminal is true but --console-socket is not set", EINVAL);

    policy_setup::Prepared policy = with_context(config, [&] { return policy_setup::prepare(rt, spec, rootfs); });
    // What the container's processes apply themselves: made now, so the init inherits them.
    policy::ProcessRestrictions restrictions;
    if (policy.active())
        restrictions = with_context(config, [&] { return policy.backend->restrictions(*policy.policy, spec); });
    InitPlan plan;
    plan.path_mounts = restrictions.path_mounts;
    plan.landlock_ruleset_fd = restrictions.landlock_ruleset.get();
    plan.landlock_flags = restrictions.landlock_flags;
    plan.added_seccomp = restrictions.seccomp;
    SupervisorPair supervisor = supervisor_pair(plan.added_seccomp, plan.seccomp, config);
    plan.supervisor_fd = supervisor.process_end.get();
    plan.spec = &spec;
    plan.rootfs = rootfs;
    plan.no_pivot = opts.no_pivot;
    // Under a policy the container's processes are told from others by the session keyring made here
    // (the BPF backends' task_prlimit): it is made whatever --no-new-keyring says.
    plan.no_new_keyring = opts.no_new_keyring && !policy.active();
    plan.preserve_fds = opts.listen_fds + opts.preserve_fds;
    with_context(config, [&] {
        if (spec.linux->seccomp)
            plan.seccomp = seccomp::compile_cached(*spec.linux->seccomp, rt.root + "/seccomp-cache");
        plan.capabilities = capabilities::parse_capabilities(process.capabilities.value_or(spec::Capabilities{}));
    });
    const spec::Namespace* user_ns = spec.find_namespace("user");
    const spec::Namespace* net_ns = spec.find_namespace("network");
    plan.new_user_namespace = user_ns && user_ns->path.empty();
    plan.in_user_namespace = user_ns != nullptr;
    plan.new_network_namespace = net_ns && net_ns->path.empty();
    const spec::Namespace* mount_ns = spec.find_namespace("mount");
    plan.new_mount_namespace = mount_ns && mount_ns->path.empty();

    const spec::Resources* resources = spec.linux->resources ? &*spec.linux->resources : nullptr;
    const std::vector<spec::DeviceRule> default_devices = cgroups::default_allowed_devices();
    // --systemd-cgroup: the scope is planned, and systemd must answer, before anything is made.
    std::optional<cgroups::systemd::ScopePlan> scope_plan;
    std::optional<cgroups::systemd::Bus> bus;
    cgroups::Mounts mounts = cgroups::Mounts::detect();
    if (rt.systemd_cgroup) {
        bus.emplace(cgroups::systemd::Bus::connect());
        if (mounts.layout != cgroups::Layout::unified)
            throw Error("--systemd-cgroup needs a host with cgroup v2 only; this one has cgroup v1 hierarchies "
                        "beside " + mounts.unified + ": run without --systemd-cgroup",
                        ENOTSUP);
        scope_plan = with_context(config, [&] {
            std::vector<spec::DeviceRule> rules = resources ? resources->devices : std::vector<spec::DeviceRule>{};
            rules.insert(rules.end(), default_devices.begin(), default_devices.end());
            return cgroups::systemd::plan_scope(spec.linux->cgroups_path, opts.id, resources, rules);
        });
    }

    state::Store store(rt.root);
    state::ContainerDir dir = store.create(opts.id);
    std::optional<cgroups::Cgroup> cgroup;
    std::vector<UniqueFd> v1_tasks; // kept open until the init has its copies
    std::optional<cgroups::systemd::UnitGuard> unit; // stops the scope after the rollback has killed the init
    CreateRollback rollback; // declared after what it cleans up, so it runs first
    rollback.dir = &dir;

    UniqueFd fifo = dir.make_exec_fifo();
    plan.fifo_fd = fifo.get();

    // The policy keys on the container's cgroup id and is in the maps before the init goes on.
    auto install_policy = [&] {
        if (!policy.active())
            return;
        rollback.policy.emplace(PolicyGuard::install(rt, opts.id, policy, *cgroup, dir));
    };
    if (!scope_plan) {
        cgroups::CreateRequest cgroup_request;
        cgroup_request.cgroups_path = spec.linux->cgroups_path;
        cgroup_request.container_id = opts.id;
        cgroup_request.resources = resources;
        cgroup_request.default_devices = default_devices;
        cgroup.emplace(with_context(config, [&] { return cgroups::Cgroup::create(cgroup_request, mounts); }));
        rollback.cgroup = &*cgroup;
        for (const auto& hierarchy : cgroup->v1_hierarchies())
            plan.cgroup_v1.push_back(
                {hierarchy.mount_point.substr(hierarchy.mount_point.rfind('/') + 1), hierarchy.dir});
        v1_tasks = cgroup->open_v1_tasks();
        for (const auto& fd : v1_tasks)
            plan.cgroup_v1_tasks.push_back(fd.get());
        install_policy();
    }

    UniqueFd console;
    if (process.terminal && opts.console_fd >= 0) {
        plan.console_fd = opts.console_fd;
    } else if (process.terminal) {
        console = console::connect_socket(opts.console_socket);
        plan.console_fd = console.get();
    }

    state::ContainerState st;
    st.id = opts.id;
    st.bundle = bundle;
    st.rootfs = rootfs;
    st.oci_version = spec.oci_version;
    st.created = state::rfc3339_now();
    st.annotations = spec.annotations;
    st.cgroup_path = scope_plan ? scope_plan->path.cgroup : cgroup->path();
    st.systemd_unit = scope_plan ? scope_plan->path.unit : "";
    st.has_policy = policy.active();
    st.cgroup_id = policy.active() && cgroup ? cgroup->id() : 0;
    st.hooks = spec.hooks.value_or(spec::Hooks{});
    st.forced = policy.forced;
    st.enforcement = policy.active() ? policy::enforcement_name(policy.backend->kind()) : "";
    st.pin_dir = policy.active() ? CERB_PIN_DIR : "";
    dir.save(st);

    if (::chdir(bundle.c_str()) != 0)
        throw_errno("chdir " + bundle);
    auto [parent_end, child_end] = SyncChannel::pair();
    ClonedChild init{};
    std::vector<namespaces::Joinable> for_children;
    for (const auto& ns : namespaces::joined_in_order(*spec.linux))
        if (namespaces::for_children_only(ns.type))
            for_children.push_back(namespaces::open(ns));
    {
        namespaces::ForChildren child_namespaces(for_children);
        // The init unshares its cgroup namespace itself, once it is in its cgroup in every hierarchy.
        int flags = namespaces::new_namespace_flags(*spec.linux) & ~CLONE_NEWCGROUP;
        init = clone_init(static_cast<uint32_t>(flags), cgroup ? &*cgroup : nullptr, plan, parent_end, child_end,
                          dir.lock_fd());
    }
    pid_t pid = init.pid;
    rollback.init_pid = pid;
    if (scope_plan) {
        // systemd makes the scope's cgroup and moves the init (which waits for parent_ready) into it.
        unit.emplace(cgroups::systemd::start_scope(*bus, *scope_plan, pid));
        init.placed = cgroups::Cgroup::Placed::in_unified;
        cgroup.emplace(with_context(config, [&] {
            return cgroups::Cgroup::adopt(scope_plan->path.cgroup, scope_plan->files, default_devices, mounts);
        }));
        install_policy();
        st.cgroup_id = policy.active() ? cgroup->id() : 0;
        dir.save(st);
    }
    if (plan.new_user_namespace)
        namespaces::write_id_maps(pid, *spec.linux);
    v1_tasks.clear();
    cgroup->add_process(pid, init.placed, cgroups::Cgroup::V1::moved_itself);
    // The init is the runtime's until it execs the agent: a createContainer hook's exec in the cgroup arms
    // the policy, and the init's remaining set-up (its session keyring, its mounts) must not be judged.
    if (policy.active())
        policy.backend->exempt_until_exec(pid, {cgroup->id(), -1, st.pin_dir});
    if (process.oom_score_adj)
        files::write_file("/proc/" + std::to_string(pid) + "/oom_score_adj", std::to_string(*process.oom_score_adj));
    parent_end.send(SyncMessage::parent_ready);

    parent_end.expect(SyncMessage::run_hooks);
    if (policy.active()) {
        // The init's mounts are in place: rules bind to what the container's paths name.
        UniqueFd root(::open(("/proc/" + std::to_string(pid) + "/root" + rootfs).c_str(),
                             O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!root)
            throw_errno("opening the container's root through /proc/" + std::to_string(pid) + "/root");
        policy.backend->fill_restrictions(*policy.policy, restrictions, root.get());
        // Its loopback is up and its resolv.conf in place; the agent has not run.
        rollback.policy->open_dns_gate(rt, opts.id, *policy.policy, root.get());
        rollback.policy->hand_to_collector(root.get(), supervisor.collector_end.get());
    }
    st.pid = pid;
    st.pid_start_time = state::process_start_time(pid);
    // Hooks before start see "created", as crun reports and the validation suite expects.
    std::string hook_state = state::oci_state_json(st, state::Status::created);
    if (spec.hooks) {
        hooks::run_all(spec.hooks->prestart, "prestart", hook_state);
        hooks::run_all(spec.hooks->create_runtime, "createRuntime", hook_state);
    }
    parent_end.send(SyncMessage::hooks_done, 0, hook_state);
    if (plan.seccomp && plan.seccomp->has_listener()) {
        UniqueFd listener = parent_end.receive_fd();
        const auto& sc = *spec.linux->seccomp;
        seccomp::send_listener(listener.get(), sc.listener_path, hook_state, sc.listener_metadata);
    }
    parent_end.expect(SyncMessage::child_ready);

    st.creating = false;
    dir.save(st);
    if (!pid_file.empty())
        write_pid_file(pid_file, pid);
    cgroup->release();
    if (rollback.policy)
        rollback.policy->keep();
    if (unit)
        unit->release();
    rollback.armed = false;
    return pid;
}

} // namespace cerberus::container
