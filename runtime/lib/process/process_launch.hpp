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

    // Sets no_new_privileges and removes the forbidden capabilities from process.
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

// No fd leaks into the container beyond stdio and the next preserve_fds;
// the others close on exec.
void close_inherited_fds(int preserve_fds);

// The process's credentials, in runc's order: inherited fds marked
// close-on-exec, seccomp (early only when it needs CAP_SYS_ADMIN, i.e. without
// no_new_privs, or has a listener, which goes to the parent over channel_fd),
// bounding set, user, capabilities, no_new_privs. Returns true when the filter
// is still to be installed, just before execve.
bool take_identity(const spec::Process& process, const capabilities::CapabilitySets& caps,
                   const std::optional<seccomp::CompiledSeccomp>& filter, int preserve_fds, int channel_fd);

// Enters the Landlock domain of ruleset_fd (no_new_privs must be set) and
// closes the fd; nothing when ruleset_fd is -1.
void restrict_self(int ruleset_fd, uint32_t flags);

// execve of program with args and env; throws only when execve fails.
[[noreturn]] void exec_program(const std::string& program, const std::vector<std::string>& args,
                               const std::vector<std::string>& env);

} // namespace cerberus::launch
