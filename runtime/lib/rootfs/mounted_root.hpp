// SPDX-License-Identifier: Apache-2.0
// The container's root as the init builds it: an fd on the root, and an fd on
// each file system the init mounted in it. A path is resolved from the
// deepest such mount on its way (else from the root), so renaming a mount
// point, which another container sharing the root may do from its own mount
// namespace, cannot send a later mount, mask, device node or write elsewhere.
#pragma once

#include "base/fd.hpp"
#include "rootfs/paths.hpp"

#include <string>
#include <vector>

namespace cerberus::mounts {

class MountedRoot {
public:
    MountedRoot() = default;
    explicit MountedRoot(UniqueFd root) : root_(std::move(root)) {}

    int root() const { return root_.get(); }

    // A mount the init made at destination. own_filesystem: a file system of
    // its own (procfs, tmpfs, ...), whose names nobody else can change; a bind
    // of a host directory is not (another container may share it). Mounts it
    // covers are forgotten.
    void add(const std::string& destination, UniqueFd mount, bool own_filesystem);

    // Opens a path of the container (paths::open's contract: an empty fd when
    // it does not exist).
    UniqueFd open(const std::string& path, int flags, uint64_t resolve = paths::in_root) const;
    // paths::make, from the same starting point.
    UniqueFd make(const std::string& path, paths::Leaf leaf, uint64_t resolve = paths::in_root) const;

    // The mount made at exactly this destination, or -1.
    int mount_at(const std::string& destination) const;

    // The container's null device, opened and checked once (char 1:3): what
    // masked files are covered with.
    void set_null(UniqueFd null) { null_ = std::move(null); }
    int null() const { return null_.get(); }

    // A procfs of the container's: its /proc mount, or else proc_at(root()).
    UniqueFd proc() const;

    // A mount asked read-only that later mount points (or /dev's nodes) go
    // in stays writable until finish_read_only gives it flags (MS_*, with
    // MS_RDONLY), as runc does for /dev.
    void read_only_later(int mount, unsigned long flags, const std::string& destination);
    void finish_read_only();

private:
    struct Mount {
        std::string destination; // clean
        UniqueFd fd;
        bool own_filesystem;
    };
    // The starting fd and the rest of the path below it.
    std::pair<int, std::string> start_of(const std::string& path) const;

    struct Deferred {
        UniqueFd mount;
        unsigned long flags;
        std::string destination; // for messages
    };

    UniqueFd root_;
    std::vector<Mount> mounts_;
    std::vector<Deferred> read_only_later_;
    UniqueFd null_;
};

// The procfs root at /proc below root, checked (procfs, its root inode,
// reached through no symlink); throws otherwise.
UniqueFd proc_at(int root);

// A procfs of the process's pid namespace mounted nowhere, so no name in the
// container leads to it; where the kernel refuses one (no CAP_SYS_ADMIN any
// more), proc_at("/"), looked up again while another process flips the name.
UniqueFd private_proc();

// Writes value to a file below a procfs root (e.g. "sys/net/ipv4/ip_forward"),
// crossing no symlink and no mount, and only if the file is procfs's own.
void write_proc(int proc_root, const std::string& relative, const std::string& value);

// A new open file description of what fd is open on, with flags, through
// proc_root's self/fd (a link the kernel resolves to fd's own file).
UniqueFd reopen(int proc_root, int fd, int flags);

} // namespace cerberus::mounts
