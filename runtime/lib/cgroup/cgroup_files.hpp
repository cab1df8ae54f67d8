// SPDX-License-Identifier: Apache-2.0
// Reading and writing cgroup control files. Errors name the file and value:
// writing "1000" to /sys/fs/cgroup/memory/x/memory.limit_in_bytes: Invalid argument
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace cerberus::cgroups {

// One write(2) for the whole value: cgroupfs takes one value per write.
// create: make the file if missing (a plain directory standing in for cgroupfs).
void write_control(const std::string& path, const std::string& value, bool create = false);

// The content without its trailing newline.
std::string read_control(const std::string& path);
std::optional<std::string> read_control_if_exists(const std::string& path);

bool control_exists(const std::string& path);

// rmdir; files are removed first only in a stand-in directory (with_files),
// since cgroupfs removes its control files with the directory.
int remove_cgroup_dir(const std::string& dir, bool with_files);

// "max" (v2) and "-1" (v1's cpu.cfs_quota_us) read as UINT64_MAX: no limit.
uint64_t parse_control_u64(const std::string& text, const std::string& path);

} // namespace cerberus::cgroups
