#include "cgroup_mounts.hpp"

#include "error.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

namespace cerberus::cgroups {

namespace {

const std::set<std::string> known_v1_controllers = {
    "blkio", "cpu", "cpuacct", "cpuset", "devices", "freezer", "hugetlb",
    "memory", "misc", "net_cls", "net_prio", "perf_event", "pids", "rdma",
};

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(const std::string& field)
{
    std::string out;
    for (size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size()) {
            out += static_cast<char>(std::stoi(field.substr(i + 1, 3), nullptr, 8));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> parts;
    std::stringstream in(s);
    for (std::string part; std::getline(in, part, sep);)
        parts.push_back(part);
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
    std::istringstream lines{std::string(mountinfo)};
    for (std::string line; std::getline(lines, line);) {
        // "id parent maj:min root mountpoint opts [optional...] - fstype source superopts"
        std::vector<std::string> fields = split(line, ' ');
        auto dash = std::find(fields.begin(), fields.end(), "-");
        if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4)
            continue;
        const std::string mount_point = unescape(fields[4]);
        const std::string& fstype = dash[1];
        if (fstype == "cgroup2") {
            // Prefer the conventional places over stray bind mounts.
            if (mounts.unified.empty() || mount_point == "/sys/fs/cgroup" || mount_point == "/sys/fs/cgroup/unified")
                mounts.unified = mount_point;
        } else if (fstype == "cgroup") {
            for (const std::string& option : split(dash[3], ','))
                if (known_v1_controllers.count(option))
                    mounts.v1.emplace(option, mount_point);
        }
    }
    if (mounts.unified.empty())
        throw Error("no cgroup2 file system is mounted (hosts with cgroup v1 only are not supported)");
    mounts.layout = mounts.v1.empty() ? Layout::unified : Layout::hybrid;
    return mounts;
}

Mounts Mounts::detect()
{
    std::ifstream in("/proc/self/mountinfo");
    if (!in)
        throw_errno("reading /proc/self/mountinfo");
    std::stringstream text;
    text << in.rdbuf();
    return parse(text.str());
}

Layout detect_layout()
{
    return Mounts::detect().layout;
}

} // namespace cerberus::cgroups
