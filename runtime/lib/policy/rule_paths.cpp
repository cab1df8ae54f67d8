// SPDX-License-Identifier: Apache-2.0
#include "policy/rule_paths.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "policy/rule_lists.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace cerberus::policy {

namespace {

// What the kernel names the file fd is open on, "" when it cannot.
std::string fd_path(int fd)
{
    char target[PATH_MAX];
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
    return n > 0 ? std::string(target, static_cast<size_t>(n)) : std::string();
}

// The rootfs-relative path of an fd opened inside it, or "" when the kernel
// names it outside the rootfs (another mount over part of it).
std::string path_in_rootfs(int fd, const std::string& rootfs)
{
    std::string path = fd_path(fd);
    if (path.empty())
        return "";
    if (path == rootfs)
        return "/";
    if (path.compare(0, rootfs.size(), rootfs) != 0 || path[rootfs.size()] != '/')
        return "";
    return path.substr(rootfs.size());
}

std::string resolve_existing(int rootfs_fd, const std::string& rootfs, const std::string& path)
{
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    std::string relative = path == "/" ? "." : path.substr(1);
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, rootfs_fd, relative.c_str(), &how, sizeof(how))));
    return fd ? path_in_rootfs(fd.get(), rootfs) : "";
}

void resolve_all(std::vector<std::string>& paths, int rootfs_fd, const std::string& rootfs)
{
    for (auto& path : paths)
        path = resolve_in_rootfs(rootfs_fd, rootfs, path);
}

} // namespace

std::string resolve_in_rootfs(int rootfs_fd, const std::string& rootfs, const std::string& path)
{
    // The longest prefix that exists is resolved; the rest does not exist yet.
    for (size_t end = path.size(); end != std::string::npos && end > 0; end = path.rfind('/', end - 1)) {
        std::string resolved = resolve_existing(rootfs_fd, rootfs, path.substr(0, end));
        if (resolved.empty())
            continue;
        std::string rest = path.substr(end);
        return resolved == "/" && !rest.empty() ? rest : resolved + rest;
    }
    return path;
}

Policy with_resolved_paths(const Policy& policy, const std::string& rootfs)
{
    UniqueFd rootfs_fd(::open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!rootfs_fd)
        throw_errno("opening the rootfs " + rootfs + " to resolve the policy's paths");
    std::string real_rootfs = fd_path(rootfs_fd.get()); // as the kernel names what is opened in it
    Policy resolved = policy;
    for (const auto& list : rule_lists()) {
        if (list.paths) {
            if (auto* paths = list.paths(resolved))
                resolve_all(*paths, rootfs_fd.get(), real_rootfs);
        }
    }
    return resolved;
}

} // namespace cerberus::policy
