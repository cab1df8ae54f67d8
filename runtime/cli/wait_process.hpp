// SPDX-License-Identifier: Apache-2.0
// Foreground run and exec: wait for the container process, forwarding the
// signals we get to it, and exit with its status.
#pragma once

#include <sys/types.h>

namespace cerberus::cli {

// Blocks every signal; returns the exit code, or 128 + the signal number
// when the process was killed by one.
int wait_forwarding_signals(pid_t pid);

} // namespace cerberus::cli
