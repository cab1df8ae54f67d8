// SPDX-License-Identifier: Apache-2.0
// Where the host's cgroup hierarchies are mounted, read from mountinfo.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::cgroups {

// unified: cgroup2 at the root (/sys/fs/cgroup); hybrid: v1 controllers
// mounted one per hierarchy plus cgroup2 beside them (/sys/fs/cgroup/unified).
enum class Layout { unified, hybrid };

struct Mounts {
    Layout layout = Layout::unified;
    std::string unified;                   // cgroup2 mount point
    // controller -> mount point, on hybrid hosts; named hierarchies without a
    // controller are keyed by their option ("name=systemd").
    std::map<std::string, std::string> v1;
    // Every cgroup and cgroup2 mount point, bind mounts of them included.
    std::vector<std::string> points;
    // The cgroup2 hierarchy was mounted with nsdelegate: a cgroup namespace is
    // a delegation boundary, and nothing moves a task across it from inside.
    bool ns_delegate = false;
    // Tests point the roots at a plain directory, where control files do not
    // appear by themselves on mkdir as they do in cgroupfs: create them on write.
    bool create_missing_files = false;

    // The v1 mount point of controller, or nullopt when it is not on v1.
    std::optional<std::string> v1_mount(const std::string& controller) const;

    // From /proc/self/mountinfo, read once per process: the kernel walks every mount to write it, and a
    // policed create asked four times. The runtime mounts only in its children's namespaces, and the
    // daemons read it once at start anyway. Throws (each time asked) when no cgroup2 is mounted.
    static Mounts detect();
    static Mounts parse(std::string_view mountinfo);
};

// Shorthand for Mounts::detect().layout.
Layout detect_layout();

} // namespace cerberus::cgroups
