// SPDX-License-Identifier: Apache-2.0
#include "cgroup/cgroup.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "cgroup/cgroup_files.hpp"
#include "cgroup/cgroup_path.hpp"
#include "cgroup/cgroup_translate.hpp"
#include "cgroup/device_filter.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>

#include <spdlog/spdlog.h>

namespace cerberus::cgroups {

namespace {

// The v1 hierarchies a container joins on hybrid hosts, used or not by its
// resources: update, pause, ps and events need them later. runc joins
// systemd's named hierarchy too, and the container sees its own cgroup there.
const char* const container_v1_controllers[] = {"blkio",   "cpu",     "cpuacct", "cpuset",      "devices",
                                                "freezer", "hugetlb", "memory",  "pids", "name=systemd"};

// Enabled on a pure cgroup v2 host whether the resources name them or not.
const char* const common_v2_controllers[] = {"cpu", "cpuset", "hugetlb", "io", "memory", "pids"};

std::vector<std::string> words(const std::optional<std::string>& text)
{
    std::vector<std::string> out;
    std::istringstream in(text.value_or(""));
    for (std::string word; in >> word;)
        out.push_back(word);
    return out;
}

bool contains(const std::vector<std::string>& list, const std::string& item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

} // namespace

struct Cgroup::Plan {
    std::vector<std::pair<std::string, ControlWrite>> writes; // (dir, write) in order
    std::vector<bpf_insn> device_program;                     // empty: devices left as they are
};

Cgroup::Cgroup(const Mounts& mounts, std::string path)
    : mounts_(mounts), path_(std::move(path)), unified_dir_(mounts.unified + path_)
{
    for (const auto& hierarchy : v1_hierarchies())
        v1_dirs_.push_back(hierarchy.dir);
}

Cgroup::Cgroup(Cgroup&& other) noexcept
    : mounts_(std::move(other.mounts_)), path_(std::move(other.path_)), unified_dir_(std::move(other.unified_dir_)),
      v1_dirs_(std::move(other.v1_dirs_)), created_(std::exchange(other.created_, {}))
{
}

Cgroup& Cgroup::operator=(Cgroup&& other) noexcept
{
    if (this != &other) {
        remove_created();
        mounts_ = std::move(other.mounts_);
        path_ = std::move(other.path_);
        unified_dir_ = std::move(other.unified_dir_);
        v1_dirs_ = std::move(other.v1_dirs_);
        created_ = std::exchange(other.created_, {});
    }
    return *this;
}

Cgroup::~Cgroup()
{
    remove_created();
}

void Cgroup::release() noexcept
{
    created_.clear();
}

void Cgroup::remove_created() noexcept
{
    for (auto dir = created_.rbegin(); dir != created_.rend(); ++dir)
        remove_cgroup_dir(*dir, mounts_.create_missing_files);
    created_.clear();
}

std::vector<Cgroup::V1Hierarchy> Cgroup::v1_hierarchies() const
{
    std::vector<V1Hierarchy> out;
    std::set<std::string> roots;
    for (const char* controller : container_v1_controllers)
        if (auto root = mounts_.v1_mount(controller); root && roots.insert(*root).second)
            out.push_back({*root, *root + path_});
    return out;
}

std::string Cgroup::v1_dir(const std::string& controller) const
{
    auto root = mounts_.v1_mount(controller);
    return root ? *root + path_ : std::string();
}

Cgroup Cgroup::open(const std::string& saved_path, const Mounts& mounts)
{
    return Cgroup(mounts, resolve_cgroups_path(saved_path, ""));
}

Cgroup Cgroup::adopt(const std::string& path, const spec::Resources& resources,
                     std::span<const spec::DeviceRule> default_devices, const Mounts& mounts)
{
    if (mounts.layout != Layout::unified)
        throw Error("the systemd cgroup driver needs a host with cgroup v2 only (" + mounts.unified +
                        " is beside cgroup v1 hierarchies)",
                    ENOTSUP);
    Cgroup cgroup(mounts, resolve_cgroups_path(path, ""));
    Plan plan = cgroup.make_plan(resources, default_devices, CurrentLimits{});
    // systemd enables the controllers of its own settings; the files may need others (hugetlb).
    std::vector<std::string> enable;
    for (const auto& [dir, write] : plan.writes)
        if (std::string controller = controller_of_key(write.file); !controller.empty() && !contains(enable, controller))
            enable.push_back(controller);
    with_context("setting up cgroup " + cgroup.path_, [&] {
        if (!enable.empty())
            cgroup.make_dirs(mounts.unified, enable, false); // every level exists: nothing is made
        cgroup.execute(plan);
    });
    return cgroup;
}

Cgroup Cgroup::create(const CreateRequest& request, const Mounts& mounts)
{
    Cgroup cgroup(mounts, resolve_cgroups_path(request.cgroups_path, request.container_id));
    static const spec::Resources no_resources;
    const spec::Resources& resources = request.resources ? *request.resources : no_resources;
    Plan plan = cgroup.make_plan(resources, request.default_devices, CurrentLimits{}); // a new cgroup's

    std::vector<std::string> enable;
    if (mounts.layout == Layout::unified)
        enable.assign(std::begin(common_v2_controllers), std::end(common_v2_controllers));
    for (const auto& [dir, write] : plan.writes) {
        std::string controller = controller_of_key(write.file);
        if (dir == cgroup.unified_dir_ && !controller.empty() && !contains(enable, controller))
            enable.push_back(controller);
    }

    with_context("creating cgroup " + cgroup.path_, [&] {
        cgroup.make_dirs(mounts.unified, enable, false);
        for (const auto& hierarchy : cgroup.v1_hierarchies())
            cgroup.make_dirs(hierarchy.mount_point, {}, hierarchy.mount_point == mounts.v1_mount("cpuset"));
        // A cgroup made beforehand (one made now is neither): its freezer
        // would hold the init for ever, its processes are not ours.
        if (!cgroup.made_now()) {
            if (cgroup.frozen())
                throw Error("container's cgroup unexpectedly frozen", EBUSY);
            if (size_t others = cgroup.pids().size())
                spdlog::warn("container's cgroup is not empty: {} process(es) found", others);
        }
        cgroup.execute(plan);
    });
    return cgroup;
}

bool Cgroup::made_now() const
{
    auto made = [&](const std::string& dir) {
        return dir.empty() || std::find(created_.begin(), created_.end(), dir) != created_.end();
    };
    return made(unified_dir_) && std::all_of(v1_dirs_.begin(), v1_dirs_.end(), made);
}

// Each level enables the wanted controllers for the next one down, and a new
// v1 cpuset level starts with its parent's cpus and mems (empty ones refuse tasks).
void Cgroup::make_dirs(const std::string& root, const std::vector<std::string>& enable, bool cpuset)
{
    std::string dir = root;
    std::istringstream components(path_);
    for (std::string component; std::getline(components, component, '/');) {
        if (component.empty())
            continue;
        if (!enable.empty()) {
            auto available = words(read_control_if_exists(dir + "/cgroup.controllers"));
            auto enabled = words(read_control_if_exists(dir + "/cgroup.subtree_control"));
            std::string request;
            for (const auto& controller : enable)
                if (contains(available, controller) && !contains(enabled, controller))
                    request += (request.empty() ? "+" : " +") + controller;
            if (!request.empty())
                write_control(dir + "/cgroup.subtree_control", request, mounts_.create_missing_files);
        }
        const std::string parent = dir;
        dir += "/" + component;
        if (::mkdir(dir.c_str(), 0755) == 0)
            created_.push_back(dir);
        else if (errno != EEXIST)
            throw_errno("mkdir " + dir);
        if (cpuset)
            for (const char* file : {"/cpuset.cpus", "/cpuset.mems"}) {
                auto inherited = read_control_if_exists(parent + file);
                auto own = read_control_if_exists(dir + file);
                if (inherited && !inherited->empty() && (!own || own->empty()))
                    write_control(dir + file, *inherited, mounts_.create_missing_files);
            }
    }
}

Cgroup::Plan Cgroup::make_plan(const spec::Resources& resources, std::span<const spec::DeviceRule> default_devices,
                               const CurrentLimits& current) const
{
    std::vector<spec::DeviceRule> device_rules = resources.devices;
    device_rules.insert(device_rules.end(), default_devices.begin(), default_devices.end());

    // Unified keys are cgroup2 files: on a hybrid host a controller held by a v1 hierarchy has none there.
    for (const auto& [key, value] : resources.unified)
        if (std::string controller = controller_of_key(key);
            !controller.empty() && !v1_dir(controller == "io" ? "blkio" : controller).empty())
            throw Error("linux.resources.unified[\"" + key + "\"]: invalid configuration: a cgroup v2 file, and this " +
                            "host has the " + controller + " controller in a cgroup v1 hierarchy",
                        EINVAL);
    Plan plan;
    for (Kind kind : all_kinds) {
        std::string dir = v1_dir(v1_controller(kind));
        if (kind == Kind::devices && dir.empty()) {
            if (!device_rules.empty())
                plan.device_program = device_filter_program(device_rules);
            continue;
        }
        auto writes = dir.empty() ? v2_writes(resources, kind)
                                  : v1_writes(resources, kind, device_rules, current);
        for (auto& write : writes)
            plan.writes.emplace_back(dir.empty() ? unified_dir_ : dir, std::move(write));
    }
    return plan;
}

void Cgroup::execute(const Plan& plan) const
{
    for (const auto& [dir, write] : plan.writes) {
        const std::string path = dir + "/" + write.file;
        if (write.only_if_exists && !control_exists(path))
            continue;
        write_control(path, write.value, mounts_.create_missing_files);
    }
    if (plan.device_program.empty())
        return;
    UniqueFd dir(::open(unified_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir)
        throw_errno("opening " + unified_dir_);
    with_context(unified_dir_, [&] { attach_device_filter(dir.get(), plan.device_program); });
}

void Cgroup::apply(const spec::Resources& resources, std::span<const spec::DeviceRule> default_devices) const
{
    CurrentLimits current;
    auto read = [](const std::string& dir, const char* file, uint64_t& into) {
        const std::string path = dir + "/" + file;
        if (auto text = read_control_if_exists(path))
            into = parse_control_u64(*text, path);
    };
    if (std::string memory = v1_dir("memory"); !memory.empty() && resources.memory)
        read(memory, "memory.limit_in_bytes", current.memory_limit);
    if (std::string cpu = v1_dir("cpu"); !cpu.empty() && resources.cpu) {
        read(cpu, "cpu.cfs_quota_us", current.cpu_quota);
        read(cpu, "cpu.cfs_period_us", current.cpu_period);
    }
    with_context("updating cgroup " + path_, [&] { execute(make_plan(resources, default_devices, current)); });
}

void Cgroup::add_process(pid_t pid, Placed placed, V1 v1) const
{
    if (v1 == V1::by_pid)
        for (const auto& dir : v1_dirs_)
            write_control(dir + "/cgroup.procs", std::to_string(pid), mounts_.create_missing_files);
    if (placed != Placed::in_unified)
        write_control(unified_dir_ + "/cgroup.procs", std::to_string(pid), mounts_.create_missing_files);
}

Cgroup Cgroup::for_process_in(const SubCgroups& sub) const
{
    Cgroup view(mounts_, path_);
    if (sub.empty())
        return view;
    if (auto all = sub.find(""); all != sub.end()) {
        const std::string below = clean_sub_cgroup(all->second);
        view.unified_dir_ += below;
        for (auto& dir : view.v1_dirs_)
            dir += below;
    } else {
        const std::vector<V1Hierarchy> hierarchies = v1_hierarchies(); // in v1_dirs_'s order
        for (const auto& [controller, path] : sub) {
            auto root = mounts_.v1_mount(controller);
            auto in = std::find_if(hierarchies.begin(), hierarchies.end(),
                                   [&](const V1Hierarchy& h) { return root && h.mount_point == *root; });
            if (in == hierarchies.end())
                throw Error("--cgroup: unknown controller " + controller +
                                " (not a cgroup v1 hierarchy the container is in; a path alone names every hierarchy)",
                            EINVAL);
            view.v1_dirs_[in - hierarchies.begin()] = in->dir + clean_sub_cgroup(path);
        }
    }
    // Before any process is made: a missing one would leave it half placed.
    std::vector<std::string> dirs = view.v1_dirs_;
    dirs.push_back(view.unified_dir_);
    for (const auto& dir : dirs)
        if (!control_exists(dir + "/cgroup.procs"))
            throw Error("--cgroup: adding pid to " + dir + "/cgroup.procs: " + errno_text(ENOENT), ENOENT);
    return view;
}

std::vector<UniqueFd> Cgroup::open_v1_tasks() const
{
    std::vector<UniqueFd> tasks;
    for (const auto& dir : v1_dirs_) {
        std::string path = dir + "/tasks";
        int flags = O_WRONLY | O_CLOEXEC | (mounts_.create_missing_files ? O_CREAT | O_APPEND : 0);
        UniqueFd fd(::open(path.c_str(), flags, 0644));
        if (!fd)
            throw_errno("opening " + path);
        tasks.push_back(std::move(fd));
    }
    return tasks;
}

void Cgroup::move_self_into_v1(const std::vector<int>& tasks_fds)
{
    for (int fd : tasks_fds) {
        if (::write(fd, "0", 1) != 1)
            throw_errno("moving into the container's v1 cgroup (its tasks file, fd " + std::to_string(fd) + ")");
        ::close(fd);
    }
}

UniqueFd Cgroup::open_unified_dir() const
{
    UniqueFd fd(::open(unified_dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        throw_errno("open " + unified_dir_);
    return fd;
}

} // namespace cerberus::cgroups
