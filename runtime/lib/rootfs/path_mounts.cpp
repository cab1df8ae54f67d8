// SPDX-License-Identifier: Apache-2.0
#include "rootfs/path_mounts.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "rootfs/mountinfo.hpp"
#include "rootfs/paths.hpp"

#include <fcntl.h>
#include <fts.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <memory>
#include <optional>

namespace cerberus::mounts {
namespace {

constexpr int max_hidden_tree_entries = 100000; // files looked at for hard links below a hidden directory

// The empty file and directory every hidden path is covered with: one small
// tmpfs, detached, shared by all (each new superblock costs the kernel a shrinker).
class Hider {
public:
    Hider()
    {
        UniqueFd context(::fsopen("tmpfs", FSOPEN_CLOEXEC));
        if (!context)
            throw_errno("fsopen tmpfs");
        check(::fsconfig(context.get(), FSCONFIG_SET_STRING, "size", "4k", 0), "fsconfig tmpfs size");
        check(::fsconfig(context.get(), FSCONFIG_SET_STRING, "mode", "000", 0), "fsconfig tmpfs mode");
        check(::fsconfig(context.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0), "creating a tmpfs");
        mount_.reset(::fsmount(context.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
        if (!mount_)
            throw_errno("fsmount tmpfs");
        UniqueFd file(::openat(mount_.get(), "file", O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0));
        if (!file)
            throw_errno("creating the empty file hidden paths are covered with");
        check(::mkdirat(mount_.get(), "dir", 0), "creating the empty directory hidden paths are covered with");
    }

    void cover(const std::string& path, bool is_dir) const
    {
        UniqueFd tree(::open_tree(mount_.get(), is_dir ? "dir" : "file", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
        if (!tree && errno == EINVAL)
            return cover_without_clone(path, is_dir); // before Linux 6.x, no clone of a detached mount
        if (!tree)
            throw_errno("cloning the cover for " + path);
        mount_attr attr{};
        attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
        check(::mount_setattr(tree.get(), "", AT_EMPTY_PATH, &attr, sizeof(attr)), "making the cover of " + path +
                                                                                        " read-only");
        check(::move_mount(tree.get(), "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH), "hiding " + path);
    }

    // The same covers made the older way: a directory gets an empty tmpfs of
    // its own; a file an empty file made beside it (or in /dev, /tmp), bound
    // over it and unlinked, so the cover has no name of its own.
    static void cover_without_clone(const std::string& path, bool is_dir)
    {
        constexpr unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
        if (is_dir) {
            check(::mount("tmpfs", path.c_str(), "tmpfs", flags | MS_RDONLY, "mode=000,size=4k"), "hiding " + path);
            return;
        }
        // Beside it, or where the container has a writable file system of its own.
        std::string cover;
        UniqueFd fd;
        for (std::string dir : {path.substr(0, path.rfind('/') + 1), std::string("/dev/"), std::string("/tmp/")}) {
            cover = dir + ".cerberus-cover-XXXXXX";
            fd.reset(::mkstemp(cover.data()));
            if (fd)
                break;
        }
        if (!fd)
            throw_errno("creating a cover for " + path);
        ::fchmod(fd.get(), 0);
        int rc = ::mount(cover.c_str(), path.c_str(), nullptr, MS_BIND, nullptr);
        int err = errno;
        ::unlink(cover.c_str());
        if (rc != 0)
            throw_errno("hiding " + path, err);
        check(::mount(nullptr, path.c_str(), nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | flags, nullptr),
              "making the cover of " + path + " read-only");
    }

private:
    UniqueFd mount_;
};

std::string join(const std::string& base, const std::string& rest)
{
    if (rest.empty())
        return base;
    return base == "/" ? rest : base + rest;
}

// Another mount showing the same object: the object's place inside its file
// system is found through the mount it is seen in (the last, longest one),
// then every other mount of that file system whose root holds that place
// shows it too.
void refuse_other_mounts(const std::string& path, dev_t dev, const std::vector<MountInfo>& mounts)
{
    const MountInfo* seen_in = nullptr;
    for (const auto& m : mounts)
        if (paths::within(path, m.mountpoint) && (!seen_in || m.mountpoint.size() >= seen_in->mountpoint.size()))
            seen_in = &m;
    if (!seen_in || seen_in->dev != dev)
        return;
    std::string inside = join(seen_in->root, path.substr(seen_in->mountpoint == "/" ? 0 : seen_in->mountpoint.size()));
    for (const auto& m : mounts) {
        if (&m == seen_in || m.dev != dev || !paths::within(inside, m.root))
            continue;
        std::string alias = join(m.mountpoint, inside.substr(m.root == "/" ? 0 : m.root.size()));
        if (alias == path)
            continue;
        throw Error("denied path " + path + " is also reachable as " + alias +
                        " (another mount of the same files), where its rule would not follow it",
                    EXDEV);
    }
}

[[noreturn]] void refuse_links(const std::string& path, const std::string& file, nlink_t links)
{
    throw Error("denied path " + path + ": " + file + " has " + std::to_string(links) +
                    " hard links, whose other names its rule would not follow",
                EMLINK);
}

void refuse_hard_links(const std::string& path, const struct stat& st)
{
    if (!S_ISDIR(st.st_mode)) {
        if (st.st_nlink > 1)
            refuse_links(path, path, st.st_nlink);
        return;
    }
    char* roots[] = {const_cast<char*>(path.c_str()), nullptr};
    std::unique_ptr<FTS, int (*)(FTS*)> tree(::fts_open(roots, FTS_PHYSICAL | FTS_XDEV | FTS_NOCHDIR, nullptr),
                                              ::fts_close);
    if (!tree)
        throw_errno("walking " + path);
    int seen = 0;
    while (FTSENT* entry = ::fts_read(tree.get())) {
        if (++seen > max_hidden_tree_entries)
            throw Error("denied path " + path + " holds more than " + std::to_string(max_hidden_tree_entries) +
                            " entries to check for hard links",
                        E2BIG);
        if ((entry->fts_info == FTS_F || entry->fts_info == FTS_SL) && entry->fts_statp->st_nlink > 1)
            refuse_links(path, entry->fts_path, entry->fts_statp->st_nlink);
    }
}

// A mount of its own for the path, so its flags are its own: read-only ones
// stay read-only when they sit below a writable path, and writable ones stay
// writable when the root turns read-only after them. Flags change on the top
// mount only: the spec's own mounts below keep theirs.
void bind_onto_itself(const PathMount& m)
{
    if (::mount(m.path.c_str(), m.path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
        throw_errno("bind mount " + m.path);
    mount_attr attr{};
    attr.attr_set = (m.kind == PathMount::Kind::read_only ? MOUNT_ATTR_RDONLY : 0) | (m.no_exec ? MOUNT_ATTR_NOEXEC : 0);
    if (attr.attr_set && ::mount_setattr(AT_FDCWD, m.path.c_str(), 0, &attr, sizeof(attr)) != 0)
        throw_errno("setting the flags of " + m.path);
}

} // namespace

void apply_path_mounts(const std::vector<PathMount>& mounts)
{
    std::optional<Hider> hider;
    std::vector<MountInfo> table;
    for (const auto& m : mounts) {
        char resolved[PATH_MAX];
        if (!::realpath(m.path.c_str(), resolved)) {
            if (errno == ENOENT)
                continue;
            throw_errno("resolving " + m.path);
        }
        PathMount target = m;
        target.path = resolved;
        if (m.kind == PathMount::Kind::read_only || m.kind == PathMount::Kind::writable ||
            m.kind == PathMount::Kind::pinned) {
            bind_onto_itself(target);
            continue;
        }
        struct stat st;
        check(::lstat(target.path.c_str(), &st), "stat " + target.path);
        refuse_hard_links(target.path, st);
        if (table.empty())
            table = read_mountinfo();
        refuse_other_mounts(target.path, st.st_dev, table);
        if (m.kind == PathMount::Kind::sole_name)
            continue;
        if (!hider)
            hider.emplace();
        hider->cover(target.path, S_ISDIR(st.st_mode));
    }
}

} // namespace cerberus::mounts
