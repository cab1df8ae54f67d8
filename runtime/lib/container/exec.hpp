// SPDX-License-Identifier: Apache-2.0
// exec: one more process in a created or running container. It joins the
// init's namespaces (/proc/<pid>/ns/*), cgroup and root, then takes on its
// own process settings with the container's seccomp profile.
#pragma once

#include "base/runtime_options.hpp"
#include "cgroup/cgroup_path.hpp"
#include "oci/spec.hpp"

#include <sys/types.h>

#include <string>

namespace cerberus::container {

struct ExecOptions {
    std::string id;
    spec::Process process;
    std::string console_socket; // needed when process.terminal, unless console_fd
    // A connected unix socket to send the terminal to: how a foreground exec gets the pty it proxies.
    int console_fd = -1;
    std::string pid_file;
    int preserve_fds = 0;
    bool ignore_paused = false;
    cgroups::SubCgroups sub_cgroups; // exec --cgroup: empty for the container's own cgroup
};

// A process.json as `exec --process FILE` takes it; errors name the file
// and field.
spec::Process load_process_file(const std::string& path);

// The process of the container's config.json: what `exec ID ARGS...` starts
// from before applying its flags.
spec::Process config_process(const RuntimeOptions& rt, const std::string& id);

// Starts the process and returns its pid, a child of the caller, once it
// has entered the container and is about to execve (errors up to then are
// thrown here). Fails, as runc, for a stopped container and for a paused
// one unless ignore_paused.
pid_t exec(const RuntimeOptions& rt, const ExecOptions& opts);

} // namespace cerberus::container
