// SPDX-License-Identifier: Apache-2.0
#include "rootfs/paths.hpp"

#include "base/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <vector>

namespace cerberus::paths {

std::string secure_join(const std::string& rootfs, const std::string& path)
{
    std::vector<std::string> pending; // components still to walk, last first
    auto push_components = [&](const std::string& p) {
        std::vector<std::string> parts;
        size_t start = 0;
        while (start <= p.size()) {
            size_t end = p.find('/', start);
            if (end == std::string::npos)
                end = p.size();
            if (end > start)
                parts.push_back(p.substr(start, end - start));
            start = end + 1;
        }
        pending.insert(pending.end(), parts.rbegin(), parts.rend());
    };
    push_components(path);
    std::vector<std::string> resolved;
    for (int links = 0; !pending.empty();) {
        std::string part = pending.back();
        pending.pop_back();
        if (part == ".")
            continue;
        if (part == "..") {
            if (!resolved.empty())
                resolved.pop_back();
            continue;
        }
        std::string current = rootfs;
        for (const auto& r : resolved)
            current += "/" + r;
        current += "/" + part;
        char target[PATH_MAX];
        ssize_t n = ::readlink(current.c_str(), target, sizeof target - 1);
        if (n < 0) { // not a symlink, or does not exist yet
            resolved.push_back(part);
            continue;
        }
        if (++links > 255)
            throw Error("resolving " + path + " in " + rootfs + ": too many symlinks", ELOOP);
        std::string link(target, n);
        if (!link.empty() && link[0] == '/')
            resolved.clear();
        push_components(link);
    }
    std::string out = rootfs;
    for (const auto& r : resolved)
        out += "/" + r;
    return out;
}

} // namespace cerberus::paths
