// SPDX-License-Identifier: Apache-2.0
// What commands after create do with a container's cgroup: pause/resume,
// ps, kill --all, events --stats, delete.
#include "cgroup/cgroup.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <sstream>

namespace cerberus::cgroups {

namespace {

// Polls until done(), backing off, for about three seconds at most.
template <typename Done>
bool wait_until(Done done)
{
    for (useconds_t delay = 100; delay < 2'000'000; delay *= 2) {
        if (done())
            return true;
        ::usleep(delay);
    }
    return done();
}

std::vector<std::string> subdirectories(const std::string& dir)
{
    std::vector<std::string> out;
    for (const auto& entry : files::list_dir(dir))
        if (entry.type == DT_DIR)
            out.push_back(dir + "/" + entry.name);
    return out;
}

void collect_pids(const std::string& dir, std::vector<pid_t>& out)
{
    std::istringstream lines(read_control(dir + "/cgroup.procs"));
    for (pid_t pid; lines >> pid;)
        out.push_back(pid);
    for (const auto& child : subdirectories(dir))
        collect_pids(child, out);
}

bool v2_frozen(const std::string& dir)
{
    std::istringstream events(read_control(dir + "/cgroup.events"));
    std::string key, value;
    while (events >> key >> value)
        if (key == "frozen")
            return value == "1";
    return false;
}

void set_v2_frozen(const std::string& dir, bool frozen)
{
    write_control(dir + "/cgroup.freeze", frozen ? "1" : "0");
    if (!wait_until([&] { return v2_frozen(dir) == frozen; }))
        throw Error(std::string("timed out waiting for ") + dir + "/cgroup.events to read frozen " +
                        (frozen ? "1" : "0"),
                    ETIMEDOUT);
}

void set_v1_freezer(const std::string& dir, const std::string& state)
{
    const std::string path = dir + "/freezer.state";
    int polls = 0;
    bool done = wait_until([&] {
        // Asking again catches tasks forked while the first request ran.
        if (polls++ % 8 == 0)
            write_control(path, state);
        return read_control(path) == state;
    });
    if (!done)
        throw Error("timed out waiting for " + path + " to read " + state, ETIMEDOUT);
}

void remove_dir_tree(const std::string& dir, bool with_files)
{
    for (const auto& child : subdirectories(dir))
        remove_dir_tree(child, with_files);
    int err = 0;
    bool removed = wait_until([&] {
        if (remove_cgroup_dir(dir, with_files) == 0 || errno == ENOENT)
            return true;
        err = errno;
        if (err != EBUSY)
            throw_errno("removing cgroup " + dir);
        return false; // processes still leaving
    });
    if (!removed)
        throw_errno("removing cgroup " + dir, err);
}

} // namespace

void Cgroup::freeze() const
{
    std::string freezer = v1_dir("freezer");
    try {
        freezer.empty() ? set_v2_frozen(unified_dir_, true) : set_v1_freezer(freezer, "FROZEN");
    } catch (const Error&) {
        // Never leave a half-frozen container behind.
        freezer.empty() ? write_control(unified_dir_ + "/cgroup.freeze", "0")
                        : write_control(freezer + "/freezer.state", "THAWED");
        throw;
    }
}

void Cgroup::thaw() const
{
    std::string freezer = v1_dir("freezer");
    freezer.empty() ? set_v2_frozen(unified_dir_, false) : set_v1_freezer(freezer, "THAWED");
}

bool Cgroup::frozen() const
{
    std::string freezer = v1_dir("freezer");
    return freezer.empty() ? v2_frozen(unified_dir_) : read_control(freezer + "/freezer.state") == "FROZEN";
}

std::vector<pid_t> Cgroup::pids() const
{
    std::vector<pid_t> out;
    // systemd removes a scope's cgroup once its last process has exited.
    if (control_exists(unified_dir_))
        collect_pids(unified_dir_, out);
    return out;
}

void Cgroup::kill_all(int signal) const
{
    // Gone (a create that failed before making it, a scope systemd removed): no process is left in it.
    if (!control_exists(unified_dir_))
        return;
    if (signal == SIGKILL && control_exists(unified_dir_ + "/cgroup.kill")) {
        write_control(unified_dir_ + "/cgroup.kill", "1");
        // Tasks frozen by the v1 freezer only die once thawed.
        if (frozen())
            thaw();
        return;
    }
    // Frozen, the processes cannot fork children that the loop would miss.
    bool was_frozen = frozen();
    if (!was_frozen)
        freeze();
    int failed_errno = 0;
    pid_t failed_pid = 0;
    for (pid_t pid : pids())
        if (::kill(pid, signal) < 0 && errno != ESRCH && !failed_errno) {
            failed_errno = errno;
            failed_pid = pid;
        }
    // A paused container stays paused, unless it was told to die.
    if (!was_frozen || signal == SIGKILL)
        thaw();
    if (failed_errno)
        throw_errno("sending signal " + std::to_string(signal) + " to " + std::to_string(failed_pid), failed_errno);
}

Stats Cgroup::stats() const
{
    Stats stats;
    std::string cpu = v1_dir("cpu"), cpuacct = v1_dir("cpuacct"), memory = v1_dir("memory"), pids = v1_dir("pids");
    stats.cpu = cpuacct.empty() ? read_cpu_v2(unified_dir_) : read_cpu_v1(cpu.empty() ? cpuacct : cpu, cpuacct);
    stats.memory = memory.empty() ? read_memory_v2(unified_dir_) : read_memory_v1(memory);
    stats.pids = read_pids(pids.empty() ? unified_dir_ : pids);
    return stats;
}

uint64_t directory_id(const std::string& dir) noexcept
{
    // A cgroup2 directory's file handle is its 64-bit kernfs id.
    alignas(file_handle) unsigned char buffer[sizeof(file_handle) + sizeof(uint64_t)];
    auto* handle = reinterpret_cast<file_handle*>(buffer);
    handle->handle_bytes = sizeof(uint64_t);
    int mount_id = 0;
    if (::name_to_handle_at(AT_FDCWD, dir.c_str(), handle, &mount_id, 0) < 0)
        return 0;
    if (handle->handle_bytes != sizeof(uint64_t)) {
        errno = EINVAL; // not a cgroup2 directory's handle
        return 0;
    }
    uint64_t id = 0;
    std::memcpy(&id, handle->f_handle, sizeof id);
    return id;
}

uint64_t Cgroup::id() const
{
    uint64_t id = directory_id(unified_dir_);
    if (id == 0)
        throw_errno("the cgroup id of " + unified_dir_);
    return id;
}

void Cgroup::destroy(bool kill_first)
{
    with_context("removing cgroup " + path_, [&] {
        if (kill_first && control_exists(unified_dir_))
            kill_all(SIGKILL);
        for (const auto& dir : v1_dirs_)
            remove_dir_tree(dir, mounts_.create_missing_files);
        remove_dir_tree(unified_dir_, mounts_.create_missing_files);
    });
    created_.clear();
}

} // namespace cerberus::cgroups
