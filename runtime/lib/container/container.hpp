// SPDX-License-Identifier: Apache-2.0
// The lifecycle operations, one file each (container_<op>.cpp). Every
// operation opens the container first and checks that its status allows the
// operation (state::Status::can_*), failing with state::refusal otherwise.
#pragma once

#include "base/runtime_options.hpp"
#include "container/state.hpp"
#include "oci/spec.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace cerberus::container {

// A container as an operation finds it: its directory (locked unless opened
// only to read), its saved state and its status now.
struct Opened {
    state::ContainerDir dir;
    state::ContainerState state;
    state::Status status;

    // Throws state::refusal(op) unless the status allows op.
    void require(state::Operation op) const;
};

// ENOENT names the container when it does not exist.
Opened open(const std::string& root, const std::string& id,
            state::Store::Access access = state::Store::Access::modify);

struct CreateOptions {
    std::string id;
    std::string bundle = ".";
    std::string console_socket;
    // A connected unix socket to send the terminal to, in place of
    // console_socket: how a foreground `run` gets the pty it proxies.
    int console_fd = -1;
    std::string pid_file;
    bool no_pivot = false;
    bool no_new_keyring = false;
    // systemd's socket activation (LISTEN_FDS): fds 3 .. 3 + listen_fds - 1
    // go to the init first, announced in its environment, as runc does;
    // the preserve_fds after them.
    int listen_fds = 0;
    int preserve_fds = 0;
};

// Sets the container up and leaves its init waiting on exec.fifo; returns
// the init's pid (a child of the calling process). On failure nothing is
// left behind: no state dir, cgroup, policy entry or process.
pid_t create(const RuntimeOptions& rt, const CreateOptions& opts);

// Releases the init of a created container to exec the user process.
void start(const RuntimeOptions& rt, const std::string& id);

// Sends signal to the init, or with all to every process of the container.
void kill(const RuntimeOptions& rt, const std::string& id, int signal, bool all);

// Removes a stopped (or created) container; force kills a running one first.
void remove(const RuntimeOptions& rt, const std::string& id, bool force);

struct Snapshot {
    state::ContainerState state;
    state::Status status;
};

Snapshot inspect(const RuntimeOptions& rt, const std::string& id);
std::vector<Snapshot> list(const RuntimeOptions& rt);

// Freezes every process of a created or running container (the cgroup
// freezer); its status becomes paused.
void pause(const RuntimeOptions& rt, const std::string& id);
void resume(const RuntimeOptions& rt, const std::string& id);

// Writes new limits into a created, running or paused container's cgroup.
// Only the resources set change; device rules are left as they are.
void update(const RuntimeOptions& rt, const std::string& id, const spec::Resources& resources);

// The pids, as the host sees them, of every process in the container's cgroup.
std::vector<pid_t> processes(const RuntimeOptions& rt, const std::string& id);

// "KILL", "SIGKILL" or "9" → 9; throws for unknown names.
int parse_signal(const std::string& name);

} // namespace cerberus::container
