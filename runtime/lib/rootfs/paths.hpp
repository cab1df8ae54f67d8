// SPDX-License-Identifier: Apache-2.0
// Paths inside a container's rootfs, shared by the mounts and the device nodes.
#pragma once

#include <string>

namespace cerberus::paths {

// rootfs + path, with every symlink resolved as if rootfs were "/", so a
// malicious rootfs cannot point a mount or a device node outside itself.
std::string secure_join(const std::string& rootfs, const std::string& path);

} // namespace cerberus::paths
