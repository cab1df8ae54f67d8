// SPDX-License-Identifier: Apache-2.0
// Seccomp filters under test are installed in forked children, which report
// back through their exit status.
#pragma once

#include "seccomp/seccomp.hpp"

#include <doctest/doctest.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::test {

inline spec::SeccompSyscall rule(std::vector<std::string> names, std::string action,
                                 std::optional<uint32_t> errno_ret = {}, std::vector<spec::SeccompArg> args = {})
{
    return spec::SeccompSyscall{std::move(names), std::move(action), errno_ret, std::move(args)};
}

// Installs the filter in a forked child with no_new_privs and runs body
// there; returns the child's wait status (exit code 0 = body succeeded).
inline int run_filtered(const seccomp::CompiledSeccomp& filter, const std::function<int()>& body)
{
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int code = 90;
        try {
            rlimit no_core{0, 0};
            setrlimit(RLIMIT_CORE, &no_core);
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && seccomp::install(filter) == -1)
                code = body();
        } catch (...) {
            code = 91;
        }
        _exit(code);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

inline int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// 0 when the syscall failed with the expected errno, 1 when it succeeded, 2 on another errno.
inline int fails_with(long rc, int expected)
{
    if (rc >= 0)
        return 1;
    return errno == expected ? 0 : 2;
}

} // namespace cerberus::test
