// SPDX-License-Identifier: Apache-2.0
#include "process/process_launch.hpp"

#include "base/error.hpp"
#include "base/log.hpp"
#include "base/unix_socket.hpp"
#include "process/capabilities.hpp"
#include "process/user.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/socket.h>
#include <linux/keyctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace cerberus::launch {

namespace {

// 0 when path is a file with an execute bit, else the errno runc's lookup
// (Go's exec.LookPath) gives: stat's, or EACCES for a directory or a file
// without execute bits.
int executable_error(const std::string& path)
{
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        return errno;
    return !S_ISDIR(st.st_mode) && (st.st_mode & 0111) ? 0 : EACCES;
}

} // namespace

void ProcessConstraints::apply_to(spec::Process& process) const
{
    process.no_new_privileges = process.no_new_privileges || no_new_privileges;
    for (const auto& entry : default_env) {
        std::string name = entry.substr(0, entry.find('=') + 1);
        if (std::none_of(process.env.begin(), process.env.end(),
                         [&](const std::string& set) { return set.starts_with(name); }))
            process.env.push_back(entry);
    }
    if (!process.capabilities || !forbidden_capabilities)
        return;
    auto forbidden = [&](const std::string& name) {
        auto cap = capabilities::capability_number(name);
        return cap && *cap < 64 && (forbidden_capabilities & (uint64_t{1} << *cap));
    };
    auto& caps = *process.capabilities;
    for (auto* set : {&caps.bounding, &caps.effective, &caps.inheritable, &caps.permitted, &caps.ambient})
        std::erase_if(*set, forbidden);
}

std::string lookup_path(const std::string& program, const std::vector<std::string>& env)
{
    const std::string quoted = "exec: \"" + program + "\"";
    std::string found;
    if (program.find('/') != std::string::npos) {
        if (int err = executable_error(program); err == EACCES)
            throw_errno(quoted, err);
        else if (err)
            throw_errno(quoted + ": stat " + program, err);
        found = program;
    } else {
        std::string search = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
        for (const auto& e : env)
            if (e.rfind("PATH=", 0) == 0)
                search = e.substr(5);
        for (size_t start = 0; start <= search.size() && found.empty();) {
            size_t end = std::min(search.find(':', start), search.size());
            std::string dir = search.substr(start, end - start);
            std::string candidate = (dir.empty() ? "." : dir) + "/" + program;
            if (executable_error(candidate) == 0)
                found = candidate;
            start = end + 1;
        }
        if (found.empty())
            throw Error(quoted + ": executable file not found in $PATH", ENOENT);
    }
    // The mode bits allow it; the mount (noexec) or an LSM may still not. A
    // seccomp profile without faccessat2 answers EPERM (glibc has no fallback
    // for AT_EACCESS): then execve itself is the judge, as in runc.
    if (::faccessat(AT_FDCWD, found.c_str(), X_OK, AT_EACCESS) != 0 && errno != EPERM && errno != ENOSYS)
        throw_errno("exec " + found);
    return found;
}

void join_new_keyring()
{
    if (::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, nullptr) < 0 && errno != ENOSYS)
        throw_errno("join a new session keyring");
}

void close_host_fds(const KeptFds& kept)
{
    std::vector<int> set_up = kept.set_up;
    std::erase_if(set_up, [](int fd) { return fd < 0; });
    std::sort(set_up.begin(), set_up.end());
    for (int fd : set_up) {
        struct stat st;
        if (::fstat(fd, &st) != 0)
            throw_errno("fd " + std::to_string(fd) + " kept for the set-up");
        if (S_ISDIR(st.st_mode))
            throw Error("fd " + std::to_string(fd) + " kept for the set-up is a directory", EBADF);
        if (::fcntl(fd, F_SETFD, FD_CLOEXEC) != 0)
            throw_errno("fd " + std::to_string(fd) + " kept for the set-up");
    }
    // The log's file goes too: nothing may write to its number once another file has it.
    log::silence();
    unsigned first = 3 + kept.passed_on;
    for (int fd : set_up) {
        if (fd < static_cast<int>(first))
            continue;
        if (static_cast<unsigned>(fd) > first && ::syscall(SYS_close_range, first, fd - 1, 0) != 0)
            throw_errno("close_range");
        first = fd + 1;
    }
    if (::syscall(SYS_close_range, first, ~0U, 0) != 0)
        throw_errno("close_range");
}

void enter_working_dir(const std::string& cwd)
{
    if (::chdir(cwd.c_str()) != 0)
        throw_errno("chdir to cwd (\"" + cwd + "\") set in config.json");
    // The system call, not glibc's getcwd, whose ENOENT would not tell a
    // directory out of reach from one removed since.
    char path[PATH_MAX];
    long n = ::syscall(SYS_getcwd, path, sizeof path);
    if (n < 0)
        throw_errno("checking cwd (\"" + cwd + "\") set in config.json");
    if (path[0] != '/')
        throw Error("cwd (\"" + cwd + "\") set in config.json is outside the container's root", EPERM);
}

void exec_program(const std::string& program, const std::vector<std::string>& args,
                  const std::vector<std::string>& env)
{
    std::vector<char*> argv, envp;
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : env)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    ::execve(program.c_str(), argv.data(), envp.data());
    throw_errno("exec " + program);
}

bool take_identity(const spec::Process& process, const capabilities::CapabilitySets& caps,
                   const std::optional<seccomp::CompiledSeccomp>& filter, int channel_fd)
{
    bool late_seccomp = filter && process.no_new_privileges && !filter->has_listener();
    if (filter && !late_seccomp) {
        int listener = seccomp::install(*filter);
        if (listener >= 0) {
            with_context("sending the seccomp listener to the runtime",
                         [&] { unix_socket::send_with_fd(channel_fd, "seccomp", listener); });
            ::close(listener);
        }
    }
    capabilities::drop_bounding_set(caps);
    user::apply_user(process.user); // we stay non-dumpable (sealed_exe.hpp) until execve
    capabilities::apply_capabilities(caps);
    if (process.no_new_privileges && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        throw_errno("prctl PR_SET_NO_NEW_PRIVS");
    return late_seccomp;
}

void restrict_self(int ruleset_fd, uint32_t flags)
{
    if (ruleset_fd < 0)
        return;
    if (::syscall(SYS_landlock_restrict_self, ruleset_fd, flags) != 0)
        throw_errno("entering the policy's landlock domain");
    ::close(ruleset_fd);
}

void install_added_filter(const seccomp::CompiledSeccomp& filter, int supervisor_fd)
{
    UniqueFd listener(seccomp::install(filter));
    if (!listener)
        return;
    if (supervisor_fd < 0)
        throw Error("the policy's seccomp listener has no supervisor to go to", EINVAL);
    with_context("handing the seccomp listener to the audit collector", [&] {
        unix_socket::send_with_fd(supervisor_fd, "listener", listener.get());
        timeval timeout{.tv_sec = 10, .tv_usec = 0};
        setsockopt(supervisor_fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
        char answer[8];
        ssize_t n = check(::recv(supervisor_fd, answer, sizeof(answer), 0), "waiting for the collector");
        if (std::string(answer, static_cast<size_t>(n)) != "ok")
            throw Error("the collector did not take it", EIO);
    });
    ::close(supervisor_fd);
}

} // namespace cerberus::launch
