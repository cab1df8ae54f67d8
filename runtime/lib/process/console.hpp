// SPDX-License-Identifier: Apache-2.0
// process.terminal: the init opens a pty inside the container, makes the
// slave its controlling terminal and stdio, and hands the master to the
// engine through --console-socket (SCM_RIGHTS), as runc does.
#pragma once

#include "base/fd.hpp"
#include "oci/spec.hpp"

#include <optional>
#include <string>

namespace cerberus::console {

// Parent: connects to the engine's console socket before the init is cloned.
UniqueFd connect_socket(const std::string& path);

// Child, after pivot_root: pty from /dev/ptmx, master sent over socket_fd,
// slave on fds 0-2 as the controlling terminal of a new session.
void setup_terminal(int socket_fd, const std::optional<spec::ConsoleSize>& size);


} // namespace cerberus::console
