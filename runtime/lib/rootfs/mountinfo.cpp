// SPDX-License-Identifier: Apache-2.0
#include "rootfs/mountinfo.hpp"

#include "base/files.hpp"

#include <sys/sysmacros.h>

#include <cstdio>
#include <sstream>

namespace cerberus::mounts {
namespace {

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

} // namespace

std::vector<MountInfo> read_mountinfo()
{
    std::vector<MountInfo> mounts;
    std::istringstream lines(files::read_file("/proc/self/mountinfo"));
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream fields(line);
        std::string id, parent, devno, root, mountpoint, field, fstype;
        fields >> id >> parent >> devno >> root >> mountpoint;
        while (fields >> field && field != "-") // the optional fields end at "-"
            ;
        fields >> fstype;
        unsigned major = 0, minor = 0;
        if (std::sscanf(devno.c_str(), "%u:%u", &major, &minor) != 2)
            continue;
        mounts.push_back({makedev(major, minor), unescape(root), unescape(mountpoint), fstype});
    }
    return mounts;
}

} // namespace cerberus::mounts
