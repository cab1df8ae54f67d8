// SPDX-License-Identifier: Apache-2.0
// The container's filesystem, built by its init inside the new mount
// namespace: rootfs propagation, the spec's mounts, /dev, pivot_root, and
// masked and read-only paths.
#pragma once

#include "oci/spec.hpp"
#include "rootfs/mounted_root.hpp"
#include "rootfs/path_mounts.hpp"

#include <sys/types.h>

#include <string>

namespace cerberus::mounts {

struct MountFlags {
    unsigned long flags = 0;       // MS_* set on the mount
    unsigned long propagation = 0; // MS_SHARED, MS_PRIVATE, ... (with MS_REC)
    bool bind = false;
    unsigned long recursive_set = 0, recursive_clear = 0; // MS_* of "rro", "rnosuid", "ratime"...: every mount below
    bool tmpcopyup = false; // tmpfs only: start with a copy of the directory it hides
    std::string data; // options the filesystem interprets
};

// Splits config.json mount options into flags, propagation and data.
MountFlags parse_options(const std::vector<std::string>& options);

// One cgroup v1 hierarchy as the container sees it under /sys/fs/cgroup.
struct CgroupV1View {
    std::string name;   // the hierarchy's directory there: "memory", "cpu,cpuacct", "systemd"
    std::string source; // host path of the container's own cgroup in it
};

struct RootfsContext {
    const spec::Spec& spec;
    std::string rootfs;   // absolute host path of the rootfs
    bool new_mount_namespace = true;
    bool in_user_namespace = false;
    bool new_network_namespace = false;
    // Not empty on a v1 or hybrid host: a cgroup mount then shows these, as
    // runc does, instead of cgroup2.
    std::vector<CgroupV1View> cgroup_v1 = {};
};

// Everything up to (not including) pivot_root: the spec's mounts, each on an
// fd opened in the root (a mount's destination errors name it, as
// "mounts[3].destination /proc: ..."), the device nodes and /dev's links.
MountedRoot prepare_rootfs(const RootfsContext& ctx);

// pivot_root into the root (or MS_MOVE + chroot for --no-pivot, or only
// chroot without a mount namespace of its own), then chdir("/").
void enter_rootfs(const MountedRoot& root, bool no_pivot, bool new_mount_namespace);

// After pivot_root: masked and read-only paths, an enforcement backend's
// path mounts, read-only root, propagation.
void finish_rootfs(const spec::Spec& spec, MountedRoot& root, const std::vector<PathMount>& path_mounts = {});

} // namespace cerberus::mounts
