// SPDX-License-Identifier: Apache-2.0
// Foreground run of a container with process.terminal and no
// --console-socket: like runc, the runtime holds the pty master itself and
// copies between it and its own stdin/stdout until the process exits.
#pragma once

#include "base/fd.hpp"

#include <sys/types.h>

namespace cerberus::cli {

// A socket pair: pass first's fd as CreateOptions::console_fd, then take the
// master from second with receive_master().
struct ConsoleChannel {
    UniqueFd container_end;
    UniqueFd runtime_end;
};
ConsoleChannel make_console_channel();

// The pty master the init sent, or an empty fd when it sent none (no terminal).
UniqueFd receive_master(int runtime_end);

// Copies stdin → master and master → stdout (stdin in raw mode when it is a
// terminal, window size kept in step), forwards signals to pid, and returns
// its exit code (128 + signal when killed).
int proxy_terminal_and_wait(pid_t pid, int master);

} // namespace cerberus::cli
