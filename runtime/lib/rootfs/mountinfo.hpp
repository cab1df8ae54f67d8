// SPDX-License-Identifier: Apache-2.0
// The calling process's mount table, from /proc/self/mountinfo.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace cerberus::mounts {

struct MountInfo {
    dev_t dev;
    std::string root;       // the mount's root inside its file system ("/": all of it)
    std::string mountpoint; // where the reader sees it
    std::string fstype;
};

// Octal escapes (\040 for a space) decoded.
std::vector<MountInfo> read_mountinfo();

} // namespace cerberus::mounts
