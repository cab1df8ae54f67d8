// SPDX-License-Identifier: Apache-2.0
// Paths inside a container's root, shared by the mounts and the device nodes,
// resolved and made through file descriptors (openat2 RESOLVE_IN_ROOT): a
// symlink, a ".." or a rename by another container sharing a directory can
// never take a step outside the root, and what was checked is what is used.
#pragma once

#include "base/fd.hpp"

#include <linux/openat2.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace cerberus::paths {

// Symlinks followed as if the root were "/"; /proc/*/fd-style links refused.
constexpr uint64_t in_root = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
// No symlink anywhere on the way, and no ".." above the root.
constexpr uint64_t no_symlinks = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
// Inside one file system: no symlink, no mount crossed, nothing above the start.
constexpr uint64_t beneath_only = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;

// openat2(root, path, flags | O_CLOEXEC, resolve). An empty fd, errno ENOENT,
// when the path does not exist; throws on any other error, naming the path.
UniqueFd open(int root, const std::string& path, int flags, uint64_t resolve = in_root);

// The same, O_PATH (flags may add O_NOFOLLOW), when what path names is a regular file; empty otherwise. Its
// type is known before anything opens it for reading (a FIFO there would hold the reader up): read it
// through its own /proc/self/fd link, which reopens that file whatever the path holds by then.
UniqueFd open_regular(int root, const std::string& path, int flags = 0);

// "a//b/./c/" -> "/a/b/c": the form mount destinations are compared in.
std::string clean(const std::string& path);

// True when prefix is path or one of its ancestors, by whole components
// (both in clean form).
bool within(const std::string& path, const std::string& prefix);

enum class Leaf { directory, file };

// mkdir -p inside root, through fds: components that exist are resolved with
// `resolve` (a dangling symlink's target is made, as runc does), missing ones
// are made with mkdirat (and the last one with mknodat for a file) relative to
// their parent's fd, and opened without following anything a racing process
// could have put there. Returns an O_PATH fd on the last component.
UniqueFd make(int root, const std::string& path, Leaf leaf, uint64_t resolve = in_root);

// The path the kernel gives an open fd (for messages).
std::string of_fd(int fd);

} // namespace cerberus::paths
