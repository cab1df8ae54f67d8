// SPDX-License-Identifier: Apache-2.0
// process.terminal: the init opens a pty inside the container, makes the
// slave its controlling terminal and stdio, and hands the master to the
// engine through --console-socket (SCM_RIGHTS), as runc does.
#pragma once

#include "base/fd.hpp"
#include "oci/spec.hpp"
#include "rootfs/mounted_root.hpp"

#include <sys/types.h>

#include <optional>
#include <string>

namespace cerberus::console {

// Parent: connects to the engine's console socket before the init is cloned.
UniqueFd connect_socket(const std::string& path);

// Child, after pivot_root: a pty from the container's devpts (its ptmx checked,
// the peer taken from the master, not by name), master sent over socket_fd,
// peer on fds 0-2 as the controlling terminal of a new session. The init
// passes its root: the peer is then also bound over /dev/console. The peer
// belongs to the process's uid (its group stays devpts's gid=), as in runc.
void setup_terminal(int socket_fd, const std::optional<spec::ConsoleSize>& size, uid_t owner,
                    const mounts::MountedRoot* root = nullptr);


} // namespace cerberus::console
