// SPDX-License-Identifier: Apache-2.0
// A container's cgroup: its directory in cgroup2 and, on hybrid hosts, in
// each v1 hierarchy. Created by `create` (which applies spec::Resources),
// re-opened from the saved path by delete, kill, pause, update, ps, events.
#pragma once

#include "base/fd.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "cgroup/cgroup_path.hpp"
#include "cgroup/cgroup_stats.hpp"
#include "oci/spec.hpp"

#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace cerberus::cgroups {

struct CreateRequest {
    std::string cgroups_path; // linux.cgroupsPath as written
    std::string container_id; // names the cgroup when cgroups_path is empty
    const spec::Resources* resources = nullptr;
    // Allowed after the spec's device rules; usually default_allowed_devices().
    std::vector<spec::DeviceRule> default_devices;
};

struct CurrentLimits;

// A cgroup2 directory's id: what bpf_get_current_cgroup_id() returns for its
// tasks; 0 when there is none (errno says why).
uint64_t directory_id(const std::string& dir) noexcept;

class Cgroup {
public:
    // Checks and translates the resources, makes the directories (enabling
    // cgroup2 controllers in the parents), then applies the resources. If
    // anything fails, the directories made are removed again. Until release(),
    // destruction removes them too.
    static Cgroup create(const CreateRequest& request, const Mounts& mounts = Mounts::detect());

    // The cgroup systemd made for a container's scope (systemd_scope.hpp), at
    // path on a pure cgroup v2 host: enables the controllers that the resources
    // left for cgroup files need, and writes those files. Never removes the
    // directory: stopping the unit does.
    static Cgroup adopt(const std::string& path, const spec::Resources& resources,
                        std::span<const spec::DeviceRule> default_devices, const Mounts& mounts = Mounts::detect());

    // The cgroup of a container created earlier; saved_path is path().
    static Cgroup open(const std::string& saved_path, const Mounts& mounts = Mounts::detect());

    Cgroup(Cgroup&& other) noexcept;
    Cgroup& operator=(Cgroup&& other) noexcept;
    Cgroup(const Cgroup&) = delete;
    Cgroup& operator=(const Cgroup&) = delete;
    ~Cgroup();

    // Keeps the directories: the container was created.
    void release() noexcept;

    // Moves pid into the cgroup in every hierarchy, or only the v1 ones when
    // it was born in the cgroup2 directory (clone3 CLONE_INTO_CGROUP), or
    // only the cgroup2 one when it moved itself into the v1 ones
    // (open_v1_tasks).
    enum class Placed { nowhere, in_unified };
    enum class V1 { by_pid, moved_itself };
    void add_process(pid_t pid, Placed placed = Placed::nowhere, V1 v1 = V1::by_pid) const;

    // The v1 hierarchies' tasks files, open for writing, for a single-threaded
    // child to write "0" to: it moves itself in. Writing a pid to cgroup.procs
    // takes a write lock over every thread group on the host, whose first take
    // in a while waits for an RCU grace period (5-15 ms on a hybrid host); a
    // thread moving itself takes none. The child needs no right of its own:
    // the kernel checks the opener's.
    std::vector<UniqueFd> open_v1_tasks() const;
    // In that child: writes "0" to each of those files, then closes it.
    static void move_self_into_v1(const std::vector<int>& tasks_fds);

    // Where exec --cgroup puts one process: sub-cgroups of this one, in every
    // hierarchy (key "") or in the v1 hierarchies of the named controllers
    // (parse_sub_cgroups). Only open_v1_tasks, open_unified_dir and
    // add_process go by the sub-cgroups; an empty map gives this cgroup's own
    // directories. Throws for an unknown controller and a missing sub-cgroup.
    Cgroup for_process_in(const SubCgroups& sub) const;

    // The cgroup2 directory, for clone3's CLONE_INTO_CGROUP.
    UniqueFd open_unified_dir() const;

    // Writes the resources (again, for update). Device rules change only when
    // resources.devices or default_devices is not empty.
    void apply(const spec::Resources& resources, std::span<const spec::DeviceRule> default_devices = {}) const;

    // Stops / restarts every process (cgroup.freeze, or the v1 freezer).
    void freeze() const;
    void thaw() const;
    bool frozen() const;

    // Every process in the cgroup and its descendants.
    std::vector<pid_t> pids() const;

    // SIGKILL through cgroup.kill where the kernel has it; otherwise the
    // processes are frozen, signalled one by one, then thawed.
    void kill_all(int signal) const;

    Stats stats() const;

    // The cgroup2 directory's id: what bpf_get_current_cgroup_id() returns
    // for its tasks.
    uint64_t id() const;

    // Removes the directories (and any sub-cgroups), waiting briefly for
    // exiting processes; kill_first sends SIGKILL to what is left first.
    void destroy(bool kill_first = false);

    // Each v1 hierarchy the container is in (none on a unified host): where the
    // hierarchy is mounted and the container's directory in it.
    struct V1Hierarchy {
        std::string mount_point;
        std::string dir;
    };
    std::vector<V1Hierarchy> v1_hierarchies() const;

    // The clean cgroup path, the same under every root ("/docker/<id>"): the
    // value to keep in state.json for open().
    const std::string& path() const { return path_; }
    const std::string& unified_dir() const { return unified_dir_; }
    const Mounts& mounts() const { return mounts_; }

private:
    struct Plan;

    Cgroup(const Mounts& mounts, std::string path);

    // The container's directory in controller's v1 hierarchy, "" when the
    // controller is not mounted on v1.
    std::string v1_dir(const std::string& controller) const;
    Plan make_plan(const spec::Resources& resources, std::span<const spec::DeviceRule> default_devices,
                   const CurrentLimits& current) const;
    void execute(const Plan& plan) const;
    void make_dirs(const std::string& root, const std::vector<std::string>& enable, bool cpuset);
    void remove_created() noexcept;
    // Whether create made the container's directory in every hierarchy, not only found one.
    bool made_now() const;

    Mounts mounts_;
    std::string path_;
    std::string unified_dir_;
    std::vector<std::string> v1_dirs_; // one per v1 hierarchy the container uses
    std::vector<std::string> created_; // in order of creation, removed on failure
};

} // namespace cerberus::cgroups
