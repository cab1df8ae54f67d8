// SPDX-License-Identifier: Apache-2.0
// linux.cgroupsPath under the systemd cgroup driver: "slice:prefix:name", as
// runc reads it, names a transient scope unit and the slice it goes in.
#pragma once

#include <string>

namespace cerberus::cgroups::systemd {

struct ScopePath {
    std::string slice;  // the unit's Slice=, "system.slice" by default
    std::string unit;   // "<prefix>-<name>.scope" ("<name>.scope" without a prefix)
    std::string cgroup; // where systemd puts it: "/system.slice/<unit>"
};

// An empty cgroups_path is ":cerberus:<container_id>". An empty slice is
// system.slice; "-.slice" is the root slice. Throws EINVAL, naming
// linux.cgroupsPath, for another form, a bad slice, a name that is empty or
// a slice (runc would make a slice unit; cerberus runs containers in
// scopes), or characters systemd does not allow in unit names.
ScopePath parse_scope_path(const std::string& cgroups_path, const std::string& container_id);

// The cgroup of a slice: "a-b.slice" -> "/a.slice/a-b.slice", "-.slice" -> "".
// Throws EINVAL for a name that is not a slice.
std::string expand_slice(const std::string& slice);

} // namespace cerberus::cgroups::systemd
