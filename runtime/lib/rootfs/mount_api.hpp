// SPDX-License-Identifier: Apache-2.0
// Mounts made, changed and placed through file descriptors (fsopen, open_tree,
// mount_setattr, move_mount): where a mount goes is an fd opened once, never a
// path the kernel looks up again, so nothing can swap it in between.
#pragma once

#include "base/fd.hpp"

#include <string>

namespace cerberus::mount_api {

// A new file system, detached: type, source, MS_* flags and data (comma
// separated options) as mount(2) takes them. `what` names it in errors.
UniqueFd create(const std::string& type, const std::string& source, unsigned long flags, const std::string& data,
                const std::string& what);

// A detached copy of the mount at dirfd/path ("" for dirfd itself), with the
// mounts below it when recursive: what a bind mount shows.
UniqueFd clone(int dirfd, const std::string& path, bool recursive, const std::string& what);

// The per-mount flags of mount(2) with MS_BIND|MS_REMOUNT: exactly those of
// `flags` (read-only, nosuid, nodev, noexec, atime). In a user namespace the
// kernel refuses to drop the flags it locked: those are kept.
void set_flags(int mount, unsigned long flags, const std::string& what);

// Per-mount flags set and cleared on the mount and every mount below it (the
// recursive options: "rro" and its kind). A change of atime mode replaces the
// mode as a whole, as the kernel wants it.
void set_recursive(int mount, unsigned long set, unsigned long clear, const std::string& what);

// MS_SHARED, MS_PRIVATE, MS_SLAVE or MS_UNBINDABLE, on the mounts below too with MS_REC.
void set_propagation(int mount, unsigned long propagation, const std::string& what);

// Puts a detached mount on the file or directory `target` is open on.
void attach(int mount, int target, const std::string& what);

} // namespace cerberus::mount_api
