// SPDX-License-Identifier: Apache-2.0
// One allowed call, on the host: who made it (the peer of the container's
// socket, by the kernel's word: SO_PEERPIDFD, checked to be in the
// container's cgroup), where (the agent's working directory resolved inside
// the caller's root, no symlink leaving it), with what (the host's binary of
// the tool, the host's environment for it and the credentials of
// credentials_dir/<tool>.env), and the tool's process: started by the broker
// (a clone sharing its memory until the exec, as posix_spawn; not in the
// container's pid namespace), in a private mount namespace where the agent's
// directory is mounted at run_dir/work, with the caller's stdio.
#pragma once

#include "base/fd.hpp"

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::broker {

// The process at the other end of a container's socket.
struct Caller {
    UniqueFd pidfd;
    pid_t pid = 0;
    UniqueFd root;  // its /proc/<pid>/root
    UniqueFd mntns; // its mount namespace
    uid_t fsuid = 0; // its filesystem ids, as the host sees them
    gid_t fsgid = 0;
};

// Throws EPERM when the peer is not in the cgroup (or one below it), ESRCH
// when it is gone. cgroup2 is the unified hierarchy's mount point.
Caller identify_caller(int connection_fd, const std::string& cgroup2, uint64_t cgroup_id);

// The agent's directory (absolute, as the agent named it), resolved under the
// caller's root (RESOLVE_IN_ROOT: "..", absolute symlinks and magic links stay
// inside); throws when it is no directory there.
UniqueFd resolve_cwd(const Caller& caller, const std::string& cwd);

// The host's binary for tool: the one the host's broker configuration (config, files::read_host_file's) names
// under "tools" ({"tools": {"kubectl": "/opt/k8s/bin/kubectl"}}: absolute, root's, writable by root alone),
// else the first on the broker's fixed PATH; throws naming the file and the field for a bad entry, ENOENT
// when there is none.
std::string host_binary(const std::string& tool, const std::string& config);

// The directories from below top down to path (path under top), for Launch::workdir_path.
std::vector<std::string> directories_below(const std::string& top, const std::string& path);

// The tool's environment: a fixed PATH, HOME and LANG, then the lines of
// credentials_dir/<tool>.env (KEY=VALUE, # comments), which must be root's
// and writable by no one else; no file: none.
std::vector<std::string> tool_environment(const std::string& tool, const std::string& dir);

struct Launch {
    std::string binary;
    std::vector<std::string> argv; // argv[0] the tool's name
    std::vector<std::string> env;
    int stdio[3] = {-1, -1, -1};
    int cwd = -1;       // resolve_cwd's
    int caller_mnt = -1;
    int host_mnt = -1;  // the broker's own mount namespace
    std::string workdir; // where the cwd is mounted in the tool's namespace
    std::string hidden_dir; // a directory above it, hidden under a tmpfs there
    std::vector<std::string> workdir_path; // the directories made in that tmpfs down to workdir
    uid_t uid = 0;       // the tool's user (tool_user.hpp)
    gid_t gid = 0;
    int idmap = -1;      // the user namespace mapping the caller's ids to it
    int cgroup_procs = -1;     // the call's cgroup under the tool's policy (ToolConfinement), joined first
    int landlock_ruleset = -1; // its Landlock ruleset, entered last
    uint32_t landlock_flags = 0; // with these landlock_restrict_self flags
};

// The tool's process, a process group of its own: killed (the whole group)
// and reaped when this goes before it was reaped; it dies with the broker too
// (PR_SET_PDEATHSIG).
class RunningTool {
public:
    static RunningTool start(const Launch& launch);
    RunningTool(RunningTool&& other) noexcept;
    RunningTool& operator=(RunningTool&&) = delete;
    ~RunningTool();

    int pidfd() const { return pidfd_.get(); }
    // The tool's mount namespace, held from its start (empty when it was gone before): its last reference
    // dropped elsewhere than in the tool's exit (deferred_close.hpp says why).
    UniqueFd release_mounts() { return std::move(mounts_); }
    // Once pidfd is readable: what is left of its group killed, the tool
    // reaped; its exit status, or 128 + the signal that ended it (signaled set).
    int reap(bool& signaled);
    void kill_group() noexcept;
    std::chrono::milliseconds elapsed() const;

private:
    RunningTool() = default;
    pid_t pid_ = 0;
    UniqueFd pidfd_;
    UniqueFd mounts_;
    bool reaped_ = false;
    std::chrono::steady_clock::time_point started_;
};

} // namespace cerberus::broker
