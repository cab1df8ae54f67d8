// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/device_filter.hpp"
#include "cgroup/systemd_scope.hpp"
#include "container/container_policy.hpp"
#include "oci/spec_parse.hpp"
#include "oci/spec_validate.hpp"
#include "process/clone_into_cgroup.hpp"
#include "process/console.hpp"
#include "process/container_init.hpp"
#include "process/hooks.hpp"
#include "process/namespaces.hpp"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
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

// The bundle as create reads it, checked before anything is made.
struct Bundle {
    std::string dir;    // resolved
    std::string config; // its config.json, which errors name
    std::string rootfs; // resolved
    spec::Spec spec;
};

Bundle read_bundle(const CreateOptions& opts)
{
    Bundle b;
    b.dir = real_path(opts.bundle, "bundle");
    b.spec = spec::load_bundle(b.dir);
    b.config = b.dir + "/config.json";
    b.rootfs = with_context(b.config, [&] {
        std::string path = spec::resolve_rootfs(b.spec, b.dir);
        spec::validate(b.spec, path);
        return real_path(path, "root.path");
    });
    if (opts.listen_fds > 0) {
        b.spec.process->env.push_back("LISTEN_FDS=" + std::to_string(opts.listen_fds));
        b.spec.process->env.push_back("LISTEN_PID=1");
    }
    if (b.spec.process->terminal && opts.console_socket.empty() && opts.console_fd < 0)
        throw Error(b.config + ": process.terminal is true but --console-socket is not set", EINVAL);
    return b;
}

// How the container's cgroup is made: by cerberus, or with --systemd-cgroup
// as systemd's scope, planned (and systemd asked) before anything is made.
struct CgroupPlan {
    cgroups::Mounts mounts;
    const spec::Resources* resources = nullptr;
    std::vector<spec::DeviceRule> default_devices;
    std::optional<cgroups::systemd::Bus> bus;
    std::optional<cgroups::systemd::ScopePlan> scope;
};

// One create, in steps; until finish(), destruction undoes what the steps
// made, newest first: the init killed, the policy's entries, the cgroup, the
// state dir (and then, as its guard goes, a systemd scope).
class Creation {
public:
    // Reads and checks the bundle and decides its policy (what it forces
    // applied to the spec): nothing is made yet.
    Creation(const RuntimeOptions& rt, const CreateOptions& opts)
        : rt_(rt), opts_(opts),
          // Named from the caller's directory, as runc takes it: create changes into the bundle before writing it.
          pid_file_(opts.pid_file.empty() ? "" : std::filesystem::absolute(opts.pid_file).string()),
          bundle_(read_bundle(opts)), policy_(with_context(bundle_.config, [&] {
              return ContainerPolicy::decide(rt, opts.id, bundle_.spec, bundle_.rootfs);
          }))
    {
    }
    Creation(const Creation&) = delete;
    Creation& operator=(const Creation&) = delete;
    ~Creation();

    void plan_init();
    void plan_cgroup();
    void make_state_dir();
    void make_cgroup();
    void connect_console();
    void save_state();
    void clone_init();
    void place_init();
    void after_mounts();
    void run_create_hooks();
    pid_t finish();

private:
    void install_policy();

    const RuntimeOptions& rt_;
    const CreateOptions& opts_;
    std::string pid_file_;
    Bundle bundle_;
    ContainerPolicy policy_;
    InitPlan plan_;
    CgroupPlan cgroup_plan_;
    std::optional<state::ContainerDir> dir_;
    std::optional<cgroups::Cgroup> cgroup_;
    bool cgroup_made_here_ = false; // systemd removes a scope's cgroup itself
    std::vector<UniqueFd> v1_tasks_; // kept open until the init has its copies
    std::optional<cgroups::systemd::UnitGuard> unit_; // stops the scope after the unwinding killed the init
    UniqueFd fifo_;
    UniqueFd console_;
    state::ContainerState st_;
    std::optional<SyncChannel> parent_end_;
    pid_t init_pid_ = 0;
    cgroups::Cgroup::Placed init_placed_{};
    bool finished_ = false;
};

Creation::~Creation()
{
    if (finished_)
        return;
    if (init_pid_ > 0) {
        ::kill(init_pid_, SIGKILL);
        ::waitpid(init_pid_, nullptr, 0);
    }
    policy_.roll_back();
    try {
        if (cgroup_ && cgroup_made_here_)
            cgroup_->destroy();
        if (dir_)
            dir_->remove();
    } catch (const Error& e) {
        spdlog::warn("cleaning up after a failed create: {}", e.what());
    }
}

// What the init applies: the spec's seccomp filter and capabilities compiled,
// and what the policy has the container's processes apply themselves, made
// now so that the init inherits them.
void Creation::plan_init()
{
    const spec::Spec& spec = bundle_.spec;
    with_context(bundle_.config, [&] {
        if (spec.linux->seccomp)
            plan_.seccomp = seccomp::compile_cached(*spec.linux->seccomp, rt_.root + "/seccomp-cache");
        const auto& wanted = spec.process->capabilities;
        plan_.capabilities = capabilities::parse_capabilities(wanted.value_or(spec::Capabilities{}));
    });
    const policy::ProcessRestrictions& restrictions = policy_.restrict_processes(spec, plan_.seccomp, bundle_.config);
    plan_.path_mounts = restrictions.path_mounts;
    plan_.landlock_ruleset_fd = restrictions.landlock_ruleset.get();
    plan_.landlock_flags = restrictions.landlock_flags;
    plan_.added_seccomp = restrictions.seccomp;
    plan_.supervisor_fd = policy_.supervisor_fd();
    plan_.spec = &spec;
    plan_.rootfs = bundle_.rootfs;
    plan_.no_pivot = opts_.no_pivot;
    // Under a policy the container's processes are told from others by the session keyring made here
    // (the BPF backends' task_prlimit): it is made whatever --no-new-keyring says.
    plan_.no_new_keyring = opts_.no_new_keyring && !policy_.active();
    plan_.preserve_fds = opts_.listen_fds + opts_.preserve_fds;
    const spec::Namespace* user_ns = spec.find_namespace("user");
    const spec::Namespace* net_ns = spec.find_namespace("network");
    const spec::Namespace* mount_ns = spec.find_namespace("mount");
    plan_.new_user_namespace = user_ns && user_ns->path.empty();
    plan_.in_user_namespace = user_ns != nullptr;
    plan_.new_network_namespace = net_ns && net_ns->path.empty();
    plan_.new_mount_namespace = mount_ns && mount_ns->path.empty();
}

void Creation::plan_cgroup()
{
    const spec::Spec& spec = bundle_.spec;
    cgroup_plan_.resources = spec.linux->resources ? &*spec.linux->resources : nullptr;
    cgroup_plan_.default_devices = cgroups::default_allowed_devices();
    cgroup_plan_.mounts = cgroups::Mounts::detect();
    if (!rt_.systemd_cgroup)
        return;
    cgroup_plan_.bus.emplace(cgroups::systemd::Bus::connect());
    if (cgroup_plan_.mounts.layout != cgroups::Layout::unified)
        throw Error("--systemd-cgroup needs a host with cgroup v2 only; this one has cgroup v1 hierarchies "
                    "beside " + cgroup_plan_.mounts.unified + ": run without --systemd-cgroup",
                    ENOTSUP);
    cgroup_plan_.scope = with_context(bundle_.config, [&] {
        const spec::Resources* resources = cgroup_plan_.resources;
        std::vector<spec::DeviceRule> rules = resources ? resources->devices : std::vector<spec::DeviceRule>{};
        rules.insert(rules.end(), cgroup_plan_.default_devices.begin(), cgroup_plan_.default_devices.end());
        return cgroups::systemd::plan_scope(spec.linux->cgroups_path, opts_.id, resources, rules);
    });
}

void Creation::make_state_dir()
{
    dir_.emplace(state::Store(rt_.root).create(opts_.id));
    fifo_ = dir_->make_exec_fifo();
    plan_.fifo_fd = fifo_.get();
}

// The policy keys on the container's cgroup id and is in the maps before the init goes on.
void Creation::install_policy()
{
    if (policy_.active())
        policy_.install(cgroup_->id(), cgroup_->open_unified_dir(), {dir_->policy_path(), dir_->policy_keys_path()});
}

// cgroupfs: the cgroup made here, before the init (which is cloned into it).
void Creation::make_cgroup()
{
    if (cgroup_plan_.scope)
        return;
    cgroups::CreateRequest request;
    request.cgroups_path = bundle_.spec.linux->cgroups_path;
    request.container_id = opts_.id;
    request.resources = cgroup_plan_.resources;
    request.default_devices = cgroup_plan_.default_devices;
    cgroup_.emplace(
        with_context(bundle_.config, [&] { return cgroups::Cgroup::create(request, cgroup_plan_.mounts); }));
    cgroup_made_here_ = true;
    for (const auto& hierarchy : cgroup_->v1_hierarchies())
        plan_.cgroup_v1.push_back({hierarchy.mount_point.substr(hierarchy.mount_point.rfind('/') + 1), hierarchy.dir});
    v1_tasks_ = cgroup_->open_v1_tasks();
    for (const auto& fd : v1_tasks_)
        plan_.cgroup_v1_tasks.push_back(fd.get());
    install_policy();
}

void Creation::connect_console()
{
    if (!bundle_.spec.process->terminal)
        return;
    if (opts_.console_fd >= 0) {
        plan_.console_fd = opts_.console_fd;
        return;
    }
    console_ = console::connect_socket(opts_.console_socket);
    plan_.console_fd = console_.get();
}

void Creation::save_state()
{
    const spec::Spec& spec = bundle_.spec;
    const auto& scope = cgroup_plan_.scope;
    st_.id = opts_.id;
    st_.bundle = bundle_.dir;
    st_.rootfs = bundle_.rootfs;
    st_.oci_version = spec.oci_version;
    st_.created = state::rfc3339_now();
    st_.annotations = spec.annotations;
    st_.cgroup_path = scope ? scope->path.cgroup : cgroup_->path();
    st_.systemd_unit = scope ? scope->path.unit : "";
    st_.has_policy = policy_.active();
    st_.cgroup_id = policy_.active() && cgroup_ ? cgroup_->id() : 0;
    st_.hooks = spec.hooks.value_or(spec::Hooks{});
    st_.forced = policy_.forced();
    st_.enforcement = policy_.enforcement();
    st_.pin_dir = policy_.pin_dir();
    dir_->save(st_);
}

void Creation::clone_init()
{
    if (::chdir(bundle_.dir.c_str()) != 0)
        throw_errno("chdir " + bundle_.dir);
    auto [parent_end, child_end] = SyncChannel::pair();
    std::vector<namespaces::Joinable> for_children;
    for (const auto& ns : namespaces::joined_in_order(*bundle_.spec.linux))
        if (namespaces::for_children_only(ns.type))
            for_children.push_back(namespaces::open(ns));
    {
        namespaces::ForChildren child_namespaces(for_children);
        // The init unshares its cgroup namespace itself, once it is in its cgroup in every hierarchy.
        int flags = namespaces::new_namespace_flags(*bundle_.spec.linux) & ~CLONE_NEWCGROUP;
        ClonedChild init = clone_into_cgroup(static_cast<uint32_t>(flags), cgroup_ ? &*cgroup_ : nullptr);
        if (init.pid == 0) {
            parent_end.close();
            ::close(dir_->lock_fd());
            run_init(plan_, child_end);
        }
        init_pid_ = init.pid;
        init_placed_ = init.placed;
    }
    child_end.close();
    parent_end_.emplace(std::move(parent_end));
}

// The init waits for parent_ready: in its cgroup everywhere, its id maps
// written, the policy installed and the init exempt until it execs.
void Creation::place_init()
{
    if (cgroup_plan_.scope) {
        // systemd makes the scope's cgroup and moves the init (which waits for parent_ready) into it.
        unit_.emplace(cgroups::systemd::start_scope(*cgroup_plan_.bus, *cgroup_plan_.scope, init_pid_));
        init_placed_ = cgroups::Cgroup::Placed::in_unified;
        cgroup_.emplace(with_context(bundle_.config, [&] {
            return cgroups::Cgroup::adopt(cgroup_plan_.scope->path.cgroup, cgroup_plan_.scope->files,
                                          cgroup_plan_.default_devices, cgroup_plan_.mounts);
        }));
        install_policy();
        st_.cgroup_id = policy_.active() ? cgroup_->id() : 0;
        dir_->save(st_);
    }
    if (plan_.new_user_namespace)
        namespaces::write_id_maps(init_pid_, *bundle_.spec.linux);
    v1_tasks_.clear();
    cgroup_->add_process(init_pid_, init_placed_, cgroups::Cgroup::V1::moved_itself);
    // The init is the runtime's until it execs the agent: a createContainer hook's exec in the cgroup arms
    // the policy, and the init's remaining set-up (its session keyring, its mounts) must not be judged.
    policy_.exempt_until_exec(init_pid_);
    if (const auto& score = bundle_.spec.process->oom_score_adj)
        files::write_file("/proc/" + std::to_string(init_pid_) + "/oom_score_adj", std::to_string(*score));
    parent_end_->send(SyncMessage::parent_ready);
}

// The init's mounts are in place: the policy's rules bind to what the container's paths name.
void Creation::after_mounts()
{
    parent_end_->expect(SyncMessage::run_hooks);
    if (!policy_.active())
        return;
    std::string root_path = "/proc/" + std::to_string(init_pid_) + "/root" + bundle_.rootfs;
    UniqueFd root(::open(root_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root)
        throw_errno("opening the container's root through /proc/" + std::to_string(init_pid_) + "/root");
    policy_.after_mounts(root.get());
}

void Creation::run_create_hooks()
{
    const spec::Spec& spec = bundle_.spec;
    st_.pid = init_pid_;
    st_.pid_start_time = state::process_start_time(init_pid_);
    // Hooks before start see "created", as crun reports and the validation suite expects.
    std::string hook_state = state::oci_state_json(st_, state::Status::created);
    if (spec.hooks) {
        hooks::run_all(spec.hooks->prestart, "prestart", hook_state);
        hooks::run_all(spec.hooks->create_runtime, "createRuntime", hook_state);
    }
    parent_end_->send(SyncMessage::hooks_done, 0, hook_state);
    if (plan_.seccomp && plan_.seccomp->has_listener()) {
        UniqueFd listener = parent_end_->receive_fd();
        const auto& sc = *spec.linux->seccomp;
        seccomp::send_listener(listener.get(), sc.listener_path, hook_state, sc.listener_metadata);
    }
    parent_end_->expect(SyncMessage::child_ready);
}

pid_t Creation::finish()
{
    st_.creating = false;
    dir_->save(st_);
    if (!pid_file_.empty())
        files::write_file_atomic(pid_file_, std::to_string(init_pid_), 0644);
    cgroup_->release();
    policy_.keep();
    if (unit_)
        unit_->release();
    finished_ = true;
    return init_pid_;
}

} // namespace

pid_t create(const RuntimeOptions& rt, const CreateOptions& opts)
{
    state::validate_id(opts.id);
    Creation creation(rt, opts); // the bundle read and checked, its policy decided
    creation.plan_init();
    creation.plan_cgroup();
    creation.make_state_dir();
    creation.make_cgroup();
    creation.connect_console();
    creation.save_state();
    creation.clone_init();
    creation.place_init();
    creation.after_mounts();
    creation.run_create_hooks();
    return creation.finish();
}

} // namespace cerberus::container
