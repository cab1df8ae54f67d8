// SPDX-License-Identifier: Apache-2.0
// linux.cgroupsPath as engines send it, turned into a clean path that is the
// same under every hierarchy root ("/docker/<id>").
#pragma once

#include <string>

namespace cerberus::cgroups {

// Absolute paths are taken from the hierarchy roots, and so are relative ones
// (not from the runtime's own cgroup); an empty path becomes "/<container_id>".
// Throws for ".." components, the root itself, and the systemd form
// "slice:prefix:name" (which needs --systemd-cgroup: systemd_path.hpp).
std::string resolve_cgroups_path(const std::string& cgroups_path, const std::string& container_id);

} // namespace cerberus::cgroups
