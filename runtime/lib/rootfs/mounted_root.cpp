// SPDX-License-Identifier: Apache-2.0
#include "rootfs/mounted_root.hpp"

#include "base/error.hpp"
#include "rootfs/mount_api.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>

namespace cerberus::mounts {
namespace {

constexpr ino_t proc_root_inode = 1;
constexpr int max_proc_lookups = 1000; // a few milliseconds

bool on_procfs(int fd)
{
    struct statfs st;
    return ::fstatfs(fd, &st) == 0 && st.f_type == PROC_SUPER_MAGIC;
}

} // namespace

void MountedRoot::add(const std::string& destination, UniqueFd mount, bool own_filesystem)
{
    std::string clean = paths::clean(destination);
    mounts_.erase(std::remove_if(mounts_.begin(), mounts_.end(),
                                 [&](const Mount& m) { return paths::within(m.destination, clean); }),
                  mounts_.end());
    mounts_.push_back({clean, std::move(mount), own_filesystem});
}

std::pair<int, std::string> MountedRoot::start_of(const std::string& path) const
{
    std::string clean = paths::clean(path);
    const Mount* deepest = nullptr;
    for (const auto& m : mounts_)
        if (m.own_filesystem && paths::within(clean, m.destination) &&
            (!deepest || m.destination.size() > deepest->destination.size()))
            deepest = &m;
    if (!deepest)
        return {root_.get(), clean};
    std::string rest = clean.substr(deepest->destination == "/" ? 0 : deepest->destination.size());
    return {deepest->fd.get(), rest.empty() ? "." : rest};
}

UniqueFd MountedRoot::open(const std::string& path, int flags, uint64_t resolve) const
{
    auto [start, rest] = start_of(path);
    return with_context(paths::clean(path), [&] { return paths::open(start, rest, flags, resolve); });
}

UniqueFd MountedRoot::make(const std::string& path, paths::Leaf leaf, uint64_t resolve) const
{
    auto [start, rest] = start_of(path);
    return paths::make(start, rest, leaf, resolve);
}

void MountedRoot::read_only_later(int mount, unsigned long flags, const std::string& destination)
{
    read_only_later_.push_back(
        {UniqueFd(check(::fcntl(mount, F_DUPFD_CLOEXEC, 0), "dup a mount fd")), flags, destination});
}

void MountedRoot::finish_read_only()
{
    for (const auto& deferred : read_only_later_)
        mount_api::set_flags(deferred.mount.get(), deferred.flags, deferred.destination);
    read_only_later_.clear();
}

int MountedRoot::mount_at(const std::string& destination) const
{
    std::string clean = paths::clean(destination);
    for (const auto& m : mounts_)
        if (m.destination == clean)
            return m.fd.get();
    return -1;
}

UniqueFd MountedRoot::proc() const
{
    int made = mount_at("/proc");
    if (made >= 0 && on_procfs(made))
        return UniqueFd(check(::fcntl(made, F_DUPFD_CLOEXEC, 3), "dup /proc"));
    return proc_at(root());
}

UniqueFd proc_at(int root)
{
    UniqueFd proc = paths::open(root, "/proc", O_PATH | O_DIRECTORY, paths::no_symlinks);
    struct stat st;
    if (!proc || !on_procfs(proc.get()) || ::fstat(proc.get(), &st) != 0 || st.st_ino != proc_root_inode)
        throw Error("/proc: not the root of a procfs", ENOENT);
    return proc;
}

UniqueFd private_proc()
{
    try {
        return mount_api::create("proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "", "a private procfs");
    } catch (const Error&) {
        // Without CAP_SYS_ADMIN over the pid namespace: the one at /proc. A
        // process that keeps renaming /proc away only makes this fail.
        UniqueFd slash(check(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), "open /"));
        for (int attempt = 0;; ++attempt) {
            try {
                return proc_at(slash.get());
            } catch (const Error&) {
                if (attempt == max_proc_lookups)
                    throw;
            }
        }
    }
}

void write_proc(int proc_root, const std::string& relative, const std::string& value)
{
    UniqueFd file = paths::open(proc_root, relative, O_WRONLY | O_NOCTTY, paths::beneath_only);
    if (!file)
        throw_errno("open /proc/" + relative);
    if (!on_procfs(file.get()))
        throw Error("/proc/" + relative + ": not a file of procfs", EXDEV);
    if (::write(file.get(), value.data(), value.size()) != static_cast<ssize_t>(value.size()))
        throw_errno("write /proc/" + relative);
}

UniqueFd reopen(int proc_root, int fd, int flags)
{
    // self/fd/N is a magic link: resolved by the kernel to fd's own file,
    // never a name in the container.
    std::string link = "self/fd/" + std::to_string(fd);
    UniqueFd file(::openat(proc_root, link.c_str(), flags | O_CLOEXEC));
    if (!file)
        throw_errno("reopen " + paths::of_fd(fd));
    return file;
}

} // namespace cerberus::mounts
