// SPDX-License-Identifier: Apache-2.0
// Path rules as the kernel will see them: the BPF programs match the path the
// kernel resolved, so a rule written through a symlink (/var/run/secrets/token
// with /var/run -> ../run) is bound to the file it names in the container's
// rootfs, not to its spelling.
#pragma once

#include "policy/policy.hpp"

#include <string>

namespace cerberus::policy {

// path with every symlink followed as the container would follow it, inside
// the rootfs and never out of it; the part that does not exist yet is kept as
// written (and so is the whole path when no part of it resolves).
std::string resolve_in_rootfs(int rootfs_fd, const std::string& rootfs, const std::string& path);

// The policy with each path rule resolved in the rootfs (the policy's own
// copy keeps the spelling the user wrote, for messages).
Policy with_resolved_paths(const Policy& policy, const std::string& rootfs);

} // namespace cerberus::policy
