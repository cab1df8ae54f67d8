// SPDX-License-Identifier: Apache-2.0
#include "broker/broker_call.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "broker/broker_protocol.hpp"
#include "broker/broker_registry.hpp"
#include "cgroup/cgroup.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <pthread.h>
#include <linux/mount.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 // Linux 6.5
#endif

namespace cerberus::broker {
namespace {

constexpr const char* tool_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

pid_t pid_of_pidfd(int pidfd)
{
    std::string info = files::read_file("/proc/self/fdinfo/" + std::to_string(pidfd));
    size_t at = info.find("\nPid:");
    return at == std::string::npos ? -1 : static_cast<pid_t>(std::strtol(info.c_str() + at + 5, nullptr, 10));
}

// The filesystem id (the fourth) of a "Uid:" or "Gid:" line of /proc/<pid>/status.
unsigned fs_id(const std::string& status, const char* key)
{
    size_t at = status.find(std::string("\n") + key);
    if (at == std::string::npos)
        throw Error(std::string("no ") + key + " in the caller's status", ESRCH);
    std::istringstream ids(status.substr(at + std::char_traits<char>::length(key) + 1));
    unsigned real = 0, effective = 0, saved = 0, fs = 0;
    if (!(ids >> real >> effective >> saved >> fs))
        throw Error(std::string("unreadable ") + key + " in the caller's status", EINVAL);
    return fs;
}

// The cgroup2 path of pid ("/cerberus-test/x"), from its "0::" line.
std::string cgroup_of(pid_t pid)
{
    std::istringstream lines(files::read_file("/proc/" + std::to_string(pid) + "/cgroup"));
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with("0::"))
            return line.substr(3);
    throw Error("process " + std::to_string(pid) + " has no cgroup2 line", ESRCH);
}

bool in_cgroup(const std::string& cgroup2, std::string path, uint64_t cgroup_id)
{
    for (;;) {
        if (cgroups::directory_id(cgroup2 + path) == cgroup_id)
            return true;
        if (path.empty() || path == "/")
            return false;
        path.resize(path.rfind('/'));
    }
}

[[noreturn]] void child_fails(const char* what)
{
    dprintf(2, "cerberus command broker: %s: %s\n", what, std::strerror(errno));
    _exit(failed_status);
}

void child_step(long rc, const char* what)
{
    if (rc < 0)
        child_fails(what);
}

// The child, in the broker's memory until its exec (RunningTool::start): nothing that allocates or writes
// what the broker's other threads may use, no exceptions, no glibc set*id wrappers (they signal every thread
// of the broker's to change its ids too): the system calls themselves.
[[noreturn]] void run_tool(const Launch& launch, char* const* argv, char* const* envp, pid_t broker)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != broker)
        _exit(failed_status);
    setpgid(0, 0);
    if (launch.cgroup_procs >= 0) // before the tool can make a socket, or a child that leaves its group
        child_step(write(launch.cgroup_procs, "0", 1), "joining the tool's cgroup");
    for (int i = 0; i < 3; ++i)
        child_step(dup2(launch.stdio[i], i), "taking the caller's stdio");
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGPIPE, SIG_DFL);
    // The agent's directory, cloned from inside its mount namespace (a mount
    // is cloned only from the namespace it is in), then mounted in a private
    // copy of the host's, where the tool finds the host's binaries and config.
    child_step(setns(launch.caller_mnt, CLONE_NEWNS), "entering the container's mount namespace");
    int tree = static_cast<int>(syscall(SYS_open_tree, launch.cwd, "",
                                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE));
    child_step(tree, "cloning the working directory");
    mount_attr idmap{};
    idmap.attr_set = MOUNT_ATTR_IDMAP;
    idmap.userns_fd = static_cast<uint64_t>(launch.idmap);
    child_step(syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &idmap, sizeof idmap),
               "mapping the caller's files to the tool's user (an idmapped mount)");
    child_step(setns(launch.host_mnt, CLONE_NEWNS), "returning to the host's mount namespace");
    child_step(unshare(CLONE_NEWNS), "making a mount namespace");
    child_step(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), "making its mounts private");
    // The broker's run directories (root's alone: its sockets, registrations, log) hidden under an empty
    // tmpfs the tool's user can walk to its working directory.
    child_step(mount("tmpfs", launch.hidden_dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=16k"),
               "hiding the broker's files");
    for (const auto& dir : launch.workdir_path)
        child_step(mkdir(dir.c_str(), 0755), "making the way to the working directory");
    child_step(syscall(SYS_move_mount, tree, "", AT_FDCWD, launch.workdir.c_str(), MOVE_MOUNT_F_EMPTY_PATH),
               "mounting the working directory");
    child_step(chdir(launch.workdir.c_str()), "entering the working directory");
    // Not root from here on: no capabilities left, none to gain by a set-id program.
    child_step(syscall(SYS_setgroups, 0, nullptr), "dropping supplementary groups");
    child_step(syscall(SYS_setresgid, launch.gid, launch.gid, launch.gid), "taking the tool's group");
    child_step(syscall(SYS_setresuid, launch.uid, launch.uid, launch.uid), "taking the tool's user");
    child_step(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
    if (launch.landlock_ruleset >= 0)
        child_step(syscall(SYS_landlock_restrict_self, launch.landlock_ruleset, launch.landlock_flags), "entering the tool's policy");
    prctl(PR_SET_PDEATHSIG, SIGKILL); // a change of credentials cleared it
    if (getppid() != broker)
        _exit(failed_status);
    syscall(SYS_close_range, 3, ~0U, 0);
    execve(launch.binary.c_str(), argv, envp);
    child_fails("running the host's tool");
}

struct ToolArgs {
    const Launch* launch;
    char* const* argv;
    char* const* envp;
    pid_t broker;
};

int tool_entry(void* arg)
{
    auto* args = static_cast<ToolArgs*>(arg);
    run_tool(*args->launch, args->argv, args->envp, args->broker);
}

std::vector<char*> pointers(const std::vector<std::string>& strings)
{
    std::vector<char*> out;
    for (const auto& s : strings)
        out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

} // namespace

Caller identify_caller(int connection_fd, const std::string& cgroup2, uint64_t cgroup_id)
{
    Caller caller;
    int pidfd = -1;
    socklen_t len = sizeof pidfd;
    check(getsockopt(connection_fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len), "SO_PEERPIDFD of the caller");
    caller.pidfd.reset(pidfd);
    caller.pid = pid_of_pidfd(pidfd);
    if (caller.pid <= 0)
        throw Error("the caller is gone", ESRCH);
    std::string proc = "/proc/" + std::to_string(caller.pid);
    caller.root.reset(open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    caller.mntns.reset(open((proc + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    std::string cgroup = cgroup_of(caller.pid);
    std::string status = files::read_file(proc + "/status");
    caller.fsuid = fs_id(status, "Uid:");
    caller.fsgid = fs_id(status, "Gid:");
    // Still alive: what was opened under /proc/<pid> is its own, not a later process's of that number.
    if (!caller.root || !caller.mntns || syscall(SYS_pidfd_send_signal, pidfd, 0, nullptr, 0) < 0)
        throw Error("the caller is gone", ESRCH);
    if (!in_cgroup(cgroup2, cgroup, cgroup_id))
        throw Error("the caller (pid " + std::to_string(caller.pid) + ", cgroup " + cgroup +
                        ") is not in the container's cgroup",
                    EPERM);
    return caller;
}

UniqueFd resolve_cwd(const Caller& caller, const std::string& cwd)
{
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(syscall(SYS_openat2, caller.root.get(), cwd.c_str(), &how, sizeof how)));
    if (!fd)
        throw_errno("the working directory " + cwd + " in the container");
    return fd;
}

namespace {

// The configuration's "tools" entry for tool, checked as the credentials are: the binary is the host's trust.
std::optional<std::string> configured_binary(const std::string& tool, const std::string& config)
{
    auto text = files::read_host_file(config, "the broker's configuration");
    if (!text)
        return std::nullopt;
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (!doc.is_object() || !doc.contains("tools"))
        return std::nullopt; // a document that does not parse is the decision hook's to name
    const auto& tools = doc["tools"];
    if (!tools.is_object())
        throw Error(config + ": tools: an object of tool names and binaries", EINVAL);
    if (!tools.contains(tool))
        return std::nullopt;
    std::string field = config + ": tools." + tool;
    if (!tools[tool].is_string() || !tools[tool].get<std::string>().starts_with("/"))
        throw Error(field + ": an absolute path", EINVAL);
    std::string path = tools[tool].get<std::string>();
    struct stat st{};
    if (stat(path.c_str(), &st) != 0)
        throw_errno(field + ": " + path);
    if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) || !(st.st_mode & S_IXOTH))
        throw Error(field + ": " + path + " must be a regular file of root's, executable by all and writable by root alone",
                    EPERM);
    return path;
}

} // namespace

std::string host_binary(const std::string& tool, const std::string& config)
{
    if (auto configured = configured_binary(tool, config))
        return *configured;
    std::istringstream dirs(tool_path);
    for (std::string dir; std::getline(dirs, dir, ':');) {
        std::string path = dir + "/" + tool;
        struct stat st{};
        if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0)
            return path;
    }
    throw Error("no " + tool + " on the host's " + tool_path, ENOENT);
}

std::vector<std::string> directories_below(const std::string& top, const std::string& path)
{
    std::vector<std::string> dirs;
    for (size_t at = path.find('/', top.size() + 1); at != std::string::npos; at = path.find('/', at + 1))
        dirs.push_back(path.substr(0, at));
    dirs.push_back(path);
    return dirs;
}

std::vector<std::string> tool_environment(const std::string& tool, const std::string& dir)
{
    std::vector<std::string> env = {std::string("PATH=") + tool_path, "HOME=/", "LANG=C.UTF-8"}; // root's home is not the tool's
    auto text = files::read_host_file(dir + "/" + tool + ".env", "a credentials file");
    if (!text)
        return env;
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line[0] != '#' && line.find('=') != std::string::npos)
            env.push_back(line);
    return env;
}

RunningTool RunningTool::start(const Launch& launch)
{
    auto argv = pointers(launch.argv);
    auto envp = pointers(launch.env);
    ToolArgs args{&launch, argv.data(), envp.data(), getpid()};
    RunningTool tool;
    tool.started_ = std::chrono::steady_clock::now();
    // As posix_spawn does: the child runs in the broker's memory on a stack of its own, the broker's thread
    // waiting until it execs or dies (no copy of the broker's page tables, no copy-on-write faults after),
    // every signal blocked meanwhile so that no handler of the broker's runs in the child.
    constexpr size_t stack_size = 256 * 1024;
    void* stack = mmap(nullptr, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        throw_errno("mapping the tool's launch stack");
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int pidfd = -1;
    tool.pid_ = clone(tool_entry, static_cast<char*>(stack) + stack_size, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                      &args, &pidfd);
    int err = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    munmap(stack, stack_size);
    if (tool.pid_ < 0)
        throw_errno("starting the tool's process", err);
    tool.pidfd_.reset(pidfd);
    // Unreaped, the pid is still the tool's; once it exited (a zombie) there is no namespace to hold.
    tool.mounts_.reset(open(("/proc/" + std::to_string(tool.pid_) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    return tool;
}

RunningTool::RunningTool(RunningTool&& other) noexcept
    : pid_(std::exchange(other.pid_, 0)), pidfd_(std::move(other.pidfd_)), mounts_(std::move(other.mounts_)),
      reaped_(std::exchange(other.reaped_, true)),
      started_(other.started_)
{
}

RunningTool::~RunningTool()
{
    if (reaped_ || !pidfd_)
        return;
    kill_group();
    siginfo_t info{};
    while (waitid(P_PIDFD, static_cast<id_t>(pidfd_.get()), &info, WEXITED) < 0 && errno == EINTR) {
    }
}

void RunningTool::kill_group() noexcept
{
    if (reaped_ || pid_ <= 0)
        return;
    kill(-pid_, SIGKILL); // its children in its group; the leader unreaped keeps the group's number ours
    syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
}

int RunningTool::reap(bool& signaled)
{
    kill(-pid_, SIGKILL); // what it left running in its group
    siginfo_t info{};
    int rc;
    while ((rc = waitid(P_PIDFD, static_cast<id_t>(pidfd_.get()), &info, WEXITED)) < 0 && errno == EINTR) {
    }
    check(rc, "waitid");
    reaped_ = true;
    signaled = info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED;
    return signaled ? 128 + info.si_status : info.si_status;
}

std::chrono::milliseconds RunningTool::elapsed() const
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
}

} // namespace cerberus::broker
