// SPDX-License-Identifier: Apache-2.0
// Device nodes in the container's /dev: the defaults every container gets
// (null, zero, full, tty, random, urandom) plus linux.devices.
#pragma once

#include "oci/spec.hpp"
#include "rootfs/mounted_root.hpp"

#include <string>
#include <vector>

namespace cerberus::devices {

// The default devices, also allowed by the cgroup device rules.
const std::vector<spec::Device>& defaults();

// Creates each device in the root, through fds (a swap of a name by a racing
// process is refused, never followed), and keeps /dev/null's fd in root. In a
// user namespace mknod is refused, so the host's node is bind-mounted
// instead, as runc does.
void create_all(mounts::MountedRoot& root, const std::vector<spec::Device>& extra, bool in_user_namespace);

} // namespace cerberus::devices
