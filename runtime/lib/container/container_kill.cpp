// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"

#include <signal.h>

#include <algorithm>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cerberus::container {

int parse_signal(const std::string& name)
{
    if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) {
        int n = std::stoi(name);
        if (n < NSIG) // 0 too: kill(2)'s check that the processes are there
            return n;
    } else {
        std::string bare = name.rfind("SIG", 0) == 0 ? name.substr(3) : name;
        for (int n = 1; n < NSIG; ++n)
            if (const char* abbrev = ::sigabbrev_np(n); abbrev && bare == abbrev)
                return n;
        if (bare.rfind("RTMIN+", 0) == 0 || bare.rfind("RTMAX-", 0) == 0) {
            int offset = std::atoi(bare.c_str() + 6);
            int n = bare[3] == 'I' ? SIGRTMIN + offset : SIGRTMAX - offset;
            if (n >= SIGRTMIN && n <= SIGRTMAX)
                return n;
        }
    }
    throw Error("unknown signal \"" + name + "\"", EINVAL);
}

void kill(const RuntimeOptions& rt, const std::string& id, int signal, bool all)
{
    Opened c = open(rt.root, id);
    if (all) { // a stopped container too: processes may be left in its cgroup
        cgroups::Cgroup::open(c.state.cgroup_path).kill_all(signal);
        return;
    }
    c.require(state::Operation::kill);
    // A pidfd pins the process we checked, so a recycled pid is never signalled.
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, c.state.pid, 0)));
    if (!pidfd || !state::process_matches(c.state))
        throw state::refusal(state::Operation::kill, state::Status::stopped, id);
    if (::syscall(SYS_pidfd_send_signal, pidfd.get(), signal, nullptr, 0) != 0)
        throw_errno("kill container init " + std::to_string(c.state.pid));
}

} // namespace cerberus::container
