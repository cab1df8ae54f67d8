// SPDX-License-Identifier: Apache-2.0
// The last steps before a container process's execve, shared by the
// container's init and by exec: both run them in the child, after the
// process has entered the container.
#pragma once

#include "oci/spec.hpp"
#include "process/capabilities.hpp"
#include "seccomp/seccomp.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::launch {

// What an agent policy forces on every process of its container, whatever
// config.json or exec's flags say. The container's state keeps it, so that
// exec applies it as create did.
struct ProcessConstraints {
    bool no_new_privileges = false;
    uint64_t forbidden_capabilities = 0; // bit n: capability n, in none of the five sets
    std::vector<std::string> default_env; // NAME=VALUE, for a process whose env does not set NAME

    // Sets no_new_privileges, removes the forbidden capabilities and adds the default variables to process.
    void apply_to(spec::Process& process) const;
};

// The program's path: as given when it holds a '/', else searched in the
// PATH of env (runc's default PATH when env has none). A directory or a file
// without execute bits is refused. The errors read as runc's, word for word,
// since engines map them to exit statuses 126 and 127:
//   exec: "foo": executable file not found in $PATH
//   exec: "/x": stat /x: no such file or directory
//   exec: "/tmp": permission denied
std::string lookup_path(const std::string& program, const std::vector<std::string>& env);

// A session keyring of its own keeps the process off the host's keys.
void join_new_keyring();

// The descriptors a process keeps once it is inside the container. Every
// other one is closed before the process resolves a path of the container's
// (its working directory, its program): a directory of the host still open
// there, named as /proc/self/fd/N, would lead out of the container's root
// (runc's CVE-2024-21626).
struct KeptFds {
    int passed_on = 0;         // 3 .. 3 + passed_on - 1: the caller's, for the program (--preserve-fds)
    std::vector<int> set_up;   // the runtime's own until execve (the channel, exec.fifo, a Landlock ruleset)
};

// Closes every fd from 3 on but those kept (negative ones are ignored); the
// kept ones close on exec but the passed-on ones. Throws if a set-up fd is a
// directory. Called as soon as the process is inside the container's root.
void close_host_fds(const KeptFds& kept);

// chdir to cwd, then the check that it is inside the process's root: the
// kernel names a working directory it cannot reach from the root
// "(unreachable)", whatever path led there.
void enter_working_dir(const std::string& cwd);

// The process's credentials, in runc's order: seccomp (early only when it
// needs CAP_SYS_ADMIN, i.e. without no_new_privs, or has a listener, which
// goes to the parent over channel_fd), bounding set, user, capabilities,
// no_new_privs. Returns true when the filter is still to be installed, just
// before execve. The fds are closed already (close_host_fds), before a
// seccomp filter could deny close_range.
bool take_identity(const spec::Process& process, const capabilities::CapabilitySets& caps,
                   const std::optional<seccomp::CompiledSeccomp>& filter, int channel_fd);

// Enters the Landlock domain of ruleset_fd (no_new_privs must be set) and
// closes the fd; nothing when ruleset_fd is -1.
void restrict_self(int ruleset_fd, uint32_t flags);

// Installs the enforcement backend's filter, the last thing before execve.
// One with a listener (audit mode under the landlock backend) sends it over
// supervisor_fd to the audit collector and waits until the collector has it:
// from the execve on, every call the filter holds waits for its answer.
void install_added_filter(const seccomp::CompiledSeccomp& filter, int supervisor_fd);

// execve of program with args and env; throws only when execve fails.
[[noreturn]] void exec_program(const std::string& program, const std::vector<std::string>& args,
                               const std::vector<std::string>& env);

} // namespace cerberus::launch
