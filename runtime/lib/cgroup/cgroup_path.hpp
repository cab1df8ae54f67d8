// SPDX-License-Identifier: Apache-2.0
// linux.cgroupsPath as engines send it, turned into a clean path that is the
// same under every hierarchy root ("/docker/<id>").
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cerberus::cgroups {

// Absolute paths are taken from the hierarchy roots, and so are relative ones
// (not from the runtime's own cgroup); an empty path becomes "/<container_id>".
// Throws for ".." components, the root itself, and the systemd form
// "slice:prefix:name" (which needs --systemd-cgroup: systemd_path.hpp).
std::string resolve_cgroups_path(const std::string& cgroups_path, const std::string& container_id);

// exec --cgroup values, each "[controller[,controller...]:]path": controller
// -> path below the container's cgroup, with "" (every hierarchy) for a path
// given alone. Throws, naming the value, for more than one colon and for a
// path without controllers beside other values.
using SubCgroups = std::map<std::string, std::string>;
SubCgroups parse_sub_cgroups(const std::vector<std::string>& values);

// A path below a container's cgroup, cleaned: "/a/b", "" for the cgroup
// itself ("/", "."). Throws for ".." components, whatever follows them.
std::string clean_sub_cgroup(const std::string& path);

} // namespace cerberus::cgroups
