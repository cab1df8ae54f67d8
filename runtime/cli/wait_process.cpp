// SPDX-License-Identifier: Apache-2.0
#include "wait_process.hpp"

#include <signal.h>
#include <sys/wait.h>

namespace cerberus::cli {

int wait_forwarding_signals(pid_t pid)
{
    sigset_t set;
    ::sigfillset(&set);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    for (;;) {
        int status;
        pid_t done = ::waitpid(pid, &status, WNOHANG);
        if (done == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        siginfo_t info;
        if (::sigwaitinfo(&set, &info) < 0)
            continue;
        if (info.si_signo != SIGCHLD)
            ::kill(pid, info.si_signo);
    }
}

} // namespace cerberus::cli
