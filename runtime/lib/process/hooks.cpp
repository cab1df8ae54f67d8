// SPDX-License-Identifier: Apache-2.0
#include "process/hooks.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/text.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

namespace cerberus::hooks {
namespace {

std::vector<char*> c_strings(const std::vector<std::string>& list)
{
    std::vector<char*> out;
    for (const auto& s : list)
        out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
}

// Waits for pid until the deadline (none when timeout_s is 0); returns the wait status.
int wait_with_timeout(pid_t pid, int timeout_s, const std::string& name)
{
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (pidfd && timeout_s > 0) {
        struct pollfd p = {pidfd.get(), POLLIN, 0};
        int rc;
        do
            rc = ::poll(&p, 1, timeout_s * 1000);
        while (rc < 0 && errno == EINTR);
        if (rc == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            throw Error(name + ": timed out after " + std::to_string(timeout_s) + "s", ETIMEDOUT);
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            throw_errno("waitpid " + name);
    return status;
}

// "bad system call" for SIGSYS: strsignal's words, lower case, as a clause.
std::string signal_description(int signal)
{
    return ascii_lower(::strsignal(signal));
}

void run_one(const spec::Hook& hook, const std::string& name, const std::string& state_json)
{
    int pipe_fds[2];
    check(::pipe2(pipe_fds, O_CLOEXEC), "pipe for " + name);
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    std::vector<std::string> args = hook.args.empty() ? std::vector<std::string>{hook.path} : hook.args;
    auto argv = c_strings(args);
    auto envp = c_strings(hook.env);
    pid_t pid = ::fork();
    if (pid < 0)
        throw_errno("fork " + name);
    if (pid == 0) {
        ::dup2(read_end.get(), STDIN_FILENO);
        ::execve(hook.path.c_str(), argv.data(), envp.data());
        ::_exit(127);
    }
    read_end.reset();
    // A hook may exit without reading its stdin: ignore EPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    ssize_t ignored = ::write(write_end.get(), state_json.data(), state_json.size());
    (void)ignored;
    write_end.reset();
    int status = wait_with_timeout(pid, hook.timeout.value_or(0), name);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
        throw Error(name + ": cannot execute " + hook.path, ENOENT);
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        throw Error(name + ": exited with status " + std::to_string(WEXITSTATUS(status)), ECHILD);
    if (WIFSIGNALED(status))
        throw Error(name + ": killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
                        signal_description(WTERMSIG(status)) + ")",
                    ECHILD);
}

std::string hook_name(const std::string& kind, size_t index, const spec::Hook& hook)
{
    return "error running hook #" + std::to_string(index) + " (" + kind + ", " + hook.path + ")"; // runc's words
}

} // namespace

void run_all(const std::vector<spec::Hook>& hooks, const std::string& kind, const std::string& state_json)
{
    for (size_t i = 0; i < hooks.size(); ++i)
        run_one(hooks[i], hook_name(kind, i, hooks[i]), state_json);
}

void run_all_warning_on_failure(const std::vector<spec::Hook>& hooks, const std::string& kind,
                                const std::string& state_json)
{
    for (size_t i = 0; i < hooks.size(); ++i) {
        try {
            run_one(hooks[i], hook_name(kind, i, hooks[i]), state_json);
        } catch (const Error& e) {
            spdlog::warn("{}", e.what());
        }
    }
}

} // namespace cerberus::hooks
