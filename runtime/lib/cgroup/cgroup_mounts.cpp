// SPDX-License-Identifier: Apache-2.0
#include "cgroup/cgroup_mounts.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <algorithm>
#include <set>
#include <vector>

namespace cerberus::cgroups {

namespace {

const std::set<std::string, std::less<>> known_v1_controllers = {
    "blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "hugetlb",
    "memory", "misc", "net_cls", "net_prio", "perf_event", "pids", "rdma",
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view field)
{
    std::string out;
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            out += static_cast<char>(std::stoi(std::string(field.substr(i + 1, 3)), nullptr, 8));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

// Views into s, which must outlive them; like getline, no empty last part.
// Runs on every lifecycle command: no stream, no copies.
std::vector<std::string_view> split(std::string_view s, char sep)
{
    std::vector<std::string_view> parts;
    for (size_t start = 0; start < s.size();) {
        size_t end = std::min(s.find(sep, start), s.size());
        parts.push_back(s.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

} // namespace

std::optional<std::string> Mounts::v1_mount(const std::string& controller) const
{
    auto it = v1.find(controller);
    if (it == v1.end())
        return std::nullopt;
    return it->second;
}

Mounts Mounts::parse(std::string_view mountinfo)
{
    Mounts mounts;
    for (std::string_view line : split(mountinfo, '\n')) {
        // "id parent maj:min root mountpoint opts [optional...] - fstype source superopts"
        std::vector<std::string_view> fields = split(line, ' ');
        auto dash = std::find(fields.begin(), fields.end(), "-");
        if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4)
            continue;
        std::string_view fstype = dash[1];
        if (fstype != "cgroup2" && fstype != "cgroup")
            continue;
        const std::string mount_point = unescape(fields[4]);
        mounts.points.push_back(mount_point);
        if (fstype == "cgroup2") {
            for (std::string_view option : split(dash[3], ','))
                mounts.ns_delegate = mounts.ns_delegate || option == "nsdelegate";
            // Prefer the conventional places over stray bind mounts.
            if (mounts.unified.empty() || mount_point == "/sys/fs/cgroup" || mount_point == "/sys/fs/cgroup/unified")
                mounts.unified = mount_point;
        } else if (fstype == "cgroup") {
            for (std::string_view option : split(dash[3], ','))
                if (known_v1_controllers.count(option) || option.starts_with("name="))
                    mounts.v1.emplace(option, mount_point);
        }
    }
    if (mounts.unified.empty())
        throw Error("no cgroup2 file system is mounted (hosts with cgroup v1 only are not supported)");
    // A named hierarchy alone (name=systemd) holds no controller: still unified.
    bool controllers_on_v1 = std::any_of(mounts.v1.begin(), mounts.v1.end(),
                                         [](const auto& entry) { return known_v1_controllers.count(entry.first); });
    mounts.layout = controllers_on_v1 ? Layout::hybrid : Layout::unified;
    return mounts;
}

Mounts Mounts::detect()
{
    static const Mounts mounts = parse(files::read_file("/proc/self/mountinfo"));
    return mounts;
}

Layout detect_layout()
{
    return Mounts::detect().layout;
}

} // namespace cerberus::cgroups
