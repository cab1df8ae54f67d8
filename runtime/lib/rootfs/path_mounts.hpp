// SPDX-License-Identifier: Apache-2.0
// Mounts the init makes over paths of the container after pivot_root (after
// the spec's masked and read-only paths), for an enforcement backend that
// needs the file system itself to refuse what its access rules cannot: a
// read-only or writable copy of a path's mount (so attribute changes, which
// Landlock does not govern, meet EROFS), exec refused below a writable path,
// a denied path hidden under an empty, read-only, mode-000 file or directory
// that no further mount can take away from a Landlock domain, and a check
// that a denied path's files have no other name for any backend to miss.
#pragma once

#include <string>
#include <vector>

namespace cerberus::mounts {

struct PathMount {
    // sole_name mounts nothing: it only refuses the other names hide refuses.
    // pinned binds a directory onto itself, flags unchanged: a mount point
    // cannot be renamed or removed, so what is mounted below keeps its name.
    enum class Kind { read_only, writable, pinned, hide, sole_name };
    Kind kind = Kind::read_only;
    std::string path; // as the container sees it
    bool no_exec = false;
};

// Called by finish_rootfs, before the root turns read-only. In the order
// given (the landlock backend plans the writable ones, the pinned, the
// read-only, then those to hide, each parents first). Paths that do not exist are skipped. A path to hide (or to check as
// sole_name) fails, naming it, when the object stays reachable by another
// name: a file with other hard links, a directory holding one, or another
// mount in the container showing the same files.
void apply_path_mounts(const std::vector<PathMount>& mounts);

} // namespace cerberus::mounts
