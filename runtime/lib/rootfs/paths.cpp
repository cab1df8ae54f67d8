// SPDX-License-Identifier: Apache-2.0
#include "rootfs/paths.hpp"

#include "base/error.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>
#include <vector>

namespace cerberus::paths {
namespace {

constexpr int max_symlinks = 40; // as the kernel's own limit on a lookup

std::vector<std::string> components(const std::string& path)
{
    std::vector<std::string> parts;
    size_t start = 0;
    while (start <= path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string::npos)
            end = path.size();
        if (end > start && path.compare(start, end - start, ".") != 0)
            parts.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

std::string join(const std::vector<std::string>& parts, size_t count)
{
    std::string out;
    for (size_t i = 0; i < count; ++i)
        out += (i ? "/" : "") + parts[i];
    return out.empty() ? "." : out;
}

std::string read_link(int dir, const std::string& name)
{
    char target[PATH_MAX];
    ssize_t n = ::readlinkat(dir, name.c_str(), target, sizeof target - 1);
    return n < 0 ? std::string() : std::string(target, static_cast<size_t>(n));
}

} // namespace

UniqueFd open(int root, const std::string& path, int flags, uint64_t resolve)
{
    std::string relative = path.find_first_not_of('/') == std::string::npos ? "." : path.substr(path.find_first_not_of('/'));
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = resolve;
    // EAGAIN: a rename somewhere in the file system while resolving in root.
    for (int attempt = 0;; ++attempt) {
        UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, root, relative.c_str(), &how, sizeof how)));
        if (fd || errno == ENOENT)
            return fd;
        if (errno != EAGAIN || attempt == 32)
            throw_errno("open " + clean(path));
    }
}

UniqueFd open_regular(int root, const std::string& path, int flags)
{
    UniqueFd fd = open(root, path, O_PATH | flags);
    struct stat st{};
    if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return UniqueFd();
    return fd;
}

std::string clean(const std::string& path)
{
    std::string out;
    for (const auto& part : components(path))
        out += "/" + part;
    return out.empty() ? "/" : out;
}

bool within(const std::string& path, const std::string& prefix)
{
    if (prefix == "/")
        return true;
    return path.compare(0, prefix.size(), prefix) == 0 && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

UniqueFd make(int root, const std::string& path, Leaf leaf, uint64_t resolve)
{
    std::vector<std::string> parts = components(path);
    for (int links = 0;;) {
        // The longest part that exists, resolved in root.
        size_t have = parts.size();
        UniqueFd dir;
        for (;; --have) {
            dir = open(root, join(parts, have), O_PATH, resolve);
            if (dir || have == 0)
                break;
        }
        if (!dir)
            throw_errno("open the root");
        if (have == parts.size())
            return dir;
        for (size_t i = have; i < parts.size(); ++i)
            if (parts[i] == "..")
                throw Error("making " + clean(path) + ": \"..\" after " + join(parts, i) + ", which does not exist",
                            ENOENT);
        std::string restart;
        for (size_t i = have; i < parts.size() && restart.empty(); ++i) {
            const std::string& name = parts[i];
            bool last = i + 1 == parts.size();
            int rc = last && leaf == Leaf::file ? ::mknodat(dir.get(), name.c_str(), S_IFREG | 0644, 0)
                                                : ::mkdirat(dir.get(), name.c_str(), 0755);
            if (rc != 0 && errno != EEXIST)
                throw_errno("making " + clean(join(parts, i + 1)));
            int flags = O_PATH | O_NOFOLLOW | (last && leaf == Leaf::file ? 0 : O_DIRECTORY);
            UniqueFd next(::openat(dir.get(), name.c_str(), flags | O_CLOEXEC));
            struct stat st;
            bool is_link = next && ::fstat(next.get(), &st) == 0 && S_ISLNK(st.st_mode);
            if (next && !is_link) {
                dir = std::move(next);
                continue;
            }
            // Already there as a symlink whose target does not exist yet (a
            // resolving open found nothing): make its target, in root.
            if (is_link)
                errno = ELOOP;
            std::string target = errno == ELOOP || errno == ENOTDIR ? read_link(dir.get(), name) : std::string();
            if (target.empty() || resolve & RESOLVE_NO_SYMLINKS)
                throw_errno("making " + clean(join(parts, i + 1)));
            if (++links > max_symlinks)
                throw Error("making " + clean(path) + ": too many symlinks", ELOOP);
            std::vector<std::string> rest(parts.begin() + static_cast<long>(i) + 1, parts.end());
            std::vector<std::string> rewritten = components(target);
            if (target[0] != '/') {
                std::vector<std::string> prefix(parts.begin(), parts.begin() + static_cast<long>(i));
                prefix.insert(prefix.end(), rewritten.begin(), rewritten.end());
                rewritten = prefix;
            }
            rewritten.insert(rewritten.end(), rest.begin(), rest.end());
            parts = rewritten;
            restart = "yes";
        }
        if (restart.empty())
            return dir;
    }
}

std::string of_fd(int fd)
{
    char target[PATH_MAX];
    std::string link = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    return n < 0 ? "fd " + std::to_string(fd) : std::string(target, static_cast<size_t>(n));
}

} // namespace cerberus::paths
