// SPDX-License-Identifier: Apache-2.0
// Device nodes in the container's /dev: the defaults every container gets
// (null, zero, full, tty, random, urandom) plus linux.devices.
#pragma once

#include "oci/spec.hpp"

#include <string>
#include <vector>

namespace cerberus::devices {

// The default devices, also allowed by the cgroup device rules.
const std::vector<spec::Device>& defaults();

// Creates each device under rootfs. In a user namespace mknod is refused, so
// the host's node is bind-mounted instead, as runc does.
void create_all(const std::string& rootfs, const std::vector<spec::Device>& extra, bool in_user_namespace);

} // namespace cerberus::devices
