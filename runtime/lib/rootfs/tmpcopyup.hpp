// SPDX-License-Identifier: Apache-2.0
// The "tmpcopyup" mount option (a runc/crun extension that Podman sets on
// the tmpfs mounts of --read-only and --tmpfs): the new tmpfs starts with a
// copy of the directory it hides.
#pragma once

#include <string>

namespace cerberus::mounts {

// Copies the tree under hidden_dir (a directory fd opened before the tmpfs
// was mounted over it) into to_dir (the new tmpfs): files, directories,
// symlinks, fifos and device nodes, with their modes and owners. `where`
// names the destination in errors.
void copy_up(int hidden_dir, int to_dir, const std::string& where);

} // namespace cerberus::mounts
