// SPDX-License-Identifier: Apache-2.0
#include "rootfs/mounts.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "rootfs/devices.hpp"
#include "rootfs/mount_api.hpp"
#include "rootfs/mountinfo.hpp"
#include "rootfs/paths.hpp"
#include "rootfs/tmpcopyup.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

namespace cerberus::mounts {
namespace {

struct OptionFlag {
    const char* name;
    bool clear;
    unsigned long flag;
};

constexpr OptionFlag option_flags[] = {
    {"ro", false, MS_RDONLY},          {"rw", true, MS_RDONLY},           {"nosuid", false, MS_NOSUID},
    {"suid", true, MS_NOSUID},         {"nodev", false, MS_NODEV},        {"dev", true, MS_NODEV},
    {"noexec", false, MS_NOEXEC},      {"exec", true, MS_NOEXEC},         {"sync", false, MS_SYNCHRONOUS},
    {"async", true, MS_SYNCHRONOUS},   {"dirsync", false, MS_DIRSYNC},    {"remount", false, MS_REMOUNT},
    {"mand", false, MS_MANDLOCK},      {"nomand", true, MS_MANDLOCK},     {"noatime", false, MS_NOATIME},
    {"atime", true, MS_NOATIME},       {"nodiratime", false, MS_NODIRATIME}, {"diratime", true, MS_NODIRATIME},
    {"relatime", false, MS_RELATIME},  {"norelatime", true, MS_RELATIME}, {"strictatime", false, MS_STRICTATIME},
    {"nostrictatime", true, MS_STRICTATIME}, {"silent", false, MS_SILENT}, {"loud", true, MS_SILENT},
};

// The flags a mount carries itself (mount_setattr's), which the recursive options may name.
constexpr unsigned long per_mount_flags =
    MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NODIRATIME | MS_NOATIME | MS_STRICTATIME | MS_RELATIME;

constexpr std::pair<const char*, unsigned long> propagation_flags[] = {
    {"private", MS_PRIVATE},         {"rprivate", MS_PRIVATE | MS_REC},       {"shared", MS_SHARED},
    {"rshared", MS_SHARED | MS_REC}, {"slave", MS_SLAVE},                     {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE},   {"runbindable", MS_UNBINDABLE | MS_REC},
};

// The only destinations below /proc a mount may take (runc's list): the files
// lxcfs emulates.
constexpr const char* lxcfs_files[] = {
    "/proc/cpuinfo", "/proc/diskstats", "/proc/meminfo", "/proc/stat",   "/proc/swaps",
    "/proc/uptime",  "/proc/loadavg",   "/proc/slabinfo", "/proc/sys/kernel/ns_last_pid", "/proc/sys/crypto/fips_enabled",
};

bool on_procfs(int fd)
{
    struct statfs st;
    return ::fstatfs(fd, &st) == 0 && st.f_type == PROC_SUPER_MAGIC;
}

bool same_file(int a, int b)
{
    struct stat sa, sb;
    return ::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// A mount whose destination resolves into procfs would stand where the
// runtime writes sysctls and masks paths (CVE-2019-16884, CVE-2025-52881):
// only procfs itself (or a bind of one) may go over /proc, and below it only
// the files lxcfs emulates.
void refuse_into_procfs(const MountedRoot& root, const spec::Mount& m, bool bind, int target)
{
    if (!on_procfs(target))
        return;
    std::string dest = paths::clean(m.destination);
    struct statfs source;
    bool procfs_source = m.type == "proc" || (bind && ::statfs(m.source.c_str(), &source) == 0 && source.f_type == PROC_SUPER_MAGIC);
    if (dest == "/proc" && procfs_source && same_file(target, root.mount_at("/proc")))
        return;
    for (const char* file : lxcfs_files)
        if (dest == file) {
            UniqueFd expected = root.open(file, O_PATH, paths::beneath_only);
            if (expected && same_file(expected.get(), target))
                return;
        }
    throw Error("resolves into procfs (" + paths::of_fd(target) +
                    "), where only procfs may be mounted over /proc, and below it only the files lxcfs emulates",
                EPERM);
}

// A bind of the host's source made read-only with every mount below it (a
// user namespace is given the host's /sys or cgroupfs so, CVE-2023-25809).
UniqueFd bind_read_only(const char* source, int target, unsigned long flags, const std::string& what)
{
    UniqueFd tree = mount_api::clone(AT_FDCWD, source, true, what);
    mount_api::set_flags(tree.get(), flags | MS_RDONLY, what);
    mount_api::set_recursive(tree.get(), MS_RDONLY, 0, what);
    mount_api::attach(tree.get(), target, what);
    return tree;
}

// As runc on a v1 or hybrid host: a tmpfs holding the container's own cgroup
// of each v1 hierarchy, bound with the mount's flags (no cgroup2, as runc), a
// symlink per controller of a shared hierarchy (cpu -> cpu,cpuacct), and the
// tmpfs read-only too when the mount is. Binds work in a user namespace.
UniqueFd mount_cgroup_v1(const std::vector<CgroupV1View>& views, int target, unsigned long flags, const std::string& what)
{
    const unsigned long tmpfs_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    UniqueFd tmpfs = mount_api::create("tmpfs", "tmpfs", tmpfs_flags, "mode=755", what);
    mount_api::attach(tmpfs.get(), target, what);
    for (const auto& view : views) {
        std::string dest = what + "/" + view.name;
        check(::mkdirat(tmpfs.get(), view.name.c_str(), 0755), "mkdir " + dest);
        UniqueFd dir = paths::open(tmpfs.get(), view.name, O_PATH | O_DIRECTORY, paths::beneath_only);
        UniqueFd tree = mount_api::clone(AT_FDCWD, view.source, true, dest);
        if (flags)
            mount_api::set_flags(tree.get(), flags, dest);
        mount_api::attach(tree.get(), dir.get(), dest);
        for (size_t start = 0; view.name.find(',') != std::string::npos && start <= view.name.size();) {
            size_t end = std::min(view.name.find(',', start), view.name.size());
            std::string link = view.name.substr(start, end - start);
            if (::symlinkat(view.name.c_str(), tmpfs.get(), link.c_str()) != 0 && errno != EEXIST)
                throw_errno("symlink " + what + "/" + link);
            start = end + 1;
        }
    }
    if (flags & MS_RDONLY)
        mount_api::set_flags(tmpfs.get(), tmpfs_flags | MS_RDONLY, what);
    return tmpfs;
}

// The mount itself, on the open target; returns the new mount.
UniqueFd mount_onto(const RootfsContext& ctx, const spec::Mount& m, const MountFlags& opts, int target)
{
    const std::string& what = m.destination;
    unsigned long flags = opts.flags & ~MS_REC;
    bool cgroup = m.type == "cgroup" || m.type == "cgroup2";
    if (cgroup && !ctx.cgroup_v1.empty())
        return mount_cgroup_v1(ctx.cgroup_v1, target, flags, what);
    if (m.type == "sysfs" && ctx.in_user_namespace && !ctx.new_network_namespace) {
        // sysfs cannot be mounted from a user namespace that does not own the
        // network namespace: give the host's, read-only, as runc does.
        return bind_read_only("/sys", target, MS_NOSUID | MS_NODEV | MS_NOEXEC, what);
    }
    UniqueFd tree;
    try {
        if (m.type == "tmpfs" && opts.tmpcopyup) {
            UniqueFd hidden(check(::openat(target, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "open " + what));
            tree = mount_api::create("tmpfs", m.source, flags, opts.data, what);
            copy_up(hidden.get(), tree.get(), what);
        } else {
            tree = mount_api::create(cgroup ? "cgroup2" : m.type, cgroup ? "cgroup2" : m.source, flags,
                                     cgroup ? "" : opts.data, what);
        }
    } catch (const Error& e) {
        if (cgroup && e.errnum() == EPERM && ctx.in_user_namespace) {
            // A user namespace without a cgroup namespace of its own may not
            // mount cgroupfs: give the host's hierarchies, as runc does.
            return bind_read_only("/sys/fs/cgroup", target, flags, what);
        }
        if (m.type != "mqueue")
            throw;
        // mqueue of the host's ipc namespace: bind it instead, as runc does.
        tree = mount_api::clone(AT_FDCWD, "/dev/mqueue", false, what);
    }
    mount_api::attach(tree.get(), target, what);
    return tree;
}

// True when a later mount's point, or a device node (in /dev), has to be made in mounts[i].
bool holds_later_mounts(const std::vector<spec::Mount>& mounts, size_t i)
{
    std::string dest = paths::clean(mounts[i].destination);
    if (dest == "/dev")
        return true;
    for (size_t j = i + 1; j < mounts.size(); ++j)
        if (std::string later = paths::clean(mounts[j].destination); later != dest && paths::within(later, dest))
            return true;
    return false;
}

void mount_entry(const RootfsContext& ctx, MountedRoot& root, const spec::Mount& m, const std::string& field,
                 bool holds_later)
{
    MountFlags opts = parse_options(m.options);
    bool bind = opts.bind || m.type == "bind";
    bool cgroup = m.type == "cgroup" || m.type == "cgroup2";
    bool read_only_later = holds_later && (opts.flags & MS_RDONLY) && !(opts.flags & MS_REMOUNT) && !cgroup;
    if (read_only_later)
        opts.flags &= ~MS_RDONLY;
    UniqueFd target = with_context(field + ".destination " + m.destination, [&] {
        paths::Leaf leaf = paths::Leaf::directory;
        if (bind) {
            struct stat st;
            if (::stat(m.source.c_str(), &st) != 0)
                throw_errno("bind source " + m.source);
            if (!S_ISDIR(st.st_mode))
                leaf = paths::Leaf::file;
        }
        // procfs and sysfs only on a directory reached through no symlink
        // (CVE-2019-19921, CVE-2023-27561, CVE-2023-28642).
        bool kernel_fs = m.type == "proc" || m.type == "sysfs";
        UniqueFd fd;
        try {
            fd = root.make(m.destination, leaf, kernel_fs ? paths::no_symlinks : paths::in_root);
        } catch (const Error& e) {
            if (!kernel_fs || e.errnum() != ELOOP)
                throw;
            throw Error(m.type + " goes only on a directory reached through no symlink, and the way to it in " +
                            paths::of_fd(root.root()) + " has one (" + e.what() + ")",
                        ELOOP);
        }
        refuse_into_procfs(root, m, bind, fd.get());
        return fd;
    });
    with_context(field + " " + m.destination, [&] {
        UniqueFd mount;
        if (bind) {
            mount = mount_api::clone(AT_FDCWD, m.source, opts.flags & MS_REC, m.destination);
            if (unsigned long extra = opts.flags & ~(MS_REC | MS_BIND | MS_REMOUNT))
                mount_api::set_flags(mount.get(), extra, m.destination);
            mount_api::attach(mount.get(), target.get(), m.destination);
        } else if (opts.flags & MS_REMOUNT) {
            // "remount": new flags for what is mounted there already.
            mount_api::set_flags(target.get(), opts.flags, m.destination);
            return;
        } else {
            mount = mount_onto(ctx, m, opts, target.get());
        }
        if (read_only_later)
            root.read_only_later(mount.get(), (opts.flags & ~(MS_REC | MS_BIND)) | MS_RDONLY, m.destination);
        if (opts.recursive_set || opts.recursive_clear)
            mount_api::set_recursive(mount.get(), opts.recursive_set, opts.recursive_clear, m.destination);
        if (opts.propagation)
            mount_api::set_propagation(mount.get(), opts.propagation, m.destination);
        root.add(m.destination, std::move(mount), !bind);
    });
}

void make_dev_symlinks(const MountedRoot& root)
{
    UniqueFd dev = root.make("/dev", paths::Leaf::directory);
    const std::pair<const char*, const char*> links[] = {
        {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
    };
    for (const auto& [target, link] : links)
        if (::symlinkat(target, dev.get(), link) != 0 && errno != EEXIST)
            throw_errno(std::string("symlink /dev/") + link);
    if (files::exists("/proc/kcore") && ::symlinkat("/proc/kcore", dev.get(), "core") != 0 && errno != EEXIST)
        throw_errno("symlink /dev/core");
    if (paths::open(dev.get(), "pts/ptmx", O_PATH, paths::no_symlinks)) {
        ::unlinkat(dev.get(), "ptmx", 0);
        if (::symlinkat("pts/ptmx", dev.get(), "ptmx") != 0)
            throw_errno("symlink /dev/ptmx");
    }
}

// The null device masked files are covered with: the one made in /dev,
// checked (CVE-2025-31133: a /dev/null swapped for a symlink or another file
// would put that file over the masked path).
int null_device(MountedRoot& root)
{
    if (root.null() < 0)
        root.set_null(root.open("/dev/null", O_PATH, paths::no_symlinks));
    struct stat st;
    if (root.null() < 0 || ::fstat(root.null(), &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
        throw Error("linux.maskedPaths: /dev/null of the container is not the null device", ENODEV);
    return root.null();
}

void mask_paths(const std::vector<std::string>& masked_paths, MountedRoot& root)
{
    // Masked directories share one empty read-only tmpfs: each new superblock
    // registers a kernel shrinker, and every 64th makes the kernel resize the
    // shrinker maps of every memory cgroup (create slows as containers add up).
    UniqueFd first_dir;
    std::vector<std::string> done;
    for (const auto& path : masked_paths) {
        std::string clean = paths::clean(path);
        if (std::find(done.begin(), done.end(), clean) != done.end())
            continue;
        done.push_back(clean);
        with_context("linux.maskedPaths " + path, [&] {
            UniqueFd target = root.open(path, O_PATH);
            struct stat st;
            if (!target)
                return;
            check(::fstat(target.get(), &st), "stat");
            UniqueFd cover;
            if (!S_ISDIR(st.st_mode))
                cover = mount_api::clone(null_device(root), "", false, path);
            else if (first_dir)
                cover = mount_api::clone(first_dir.get(), "", false, path);
            else
                cover = mount_api::create("tmpfs", "tmpfs", MS_RDONLY, "", path);
            mount_api::attach(cover.get(), target.get(), path);
            if (S_ISDIR(st.st_mode) && !first_dir)
                first_dir = std::move(cover);
        });
    }
}

// Without pivot_root the host's /proc and /sys stay mounted below the moved
// root, and the kernel lets a process mount a fresh proc or sysfs (unmasked)
// wherever a full one is in its mount namespace: each full one outside the
// rootfs is detached, or covered where it cannot be (locked in a user
// namespace), as runc does.
void detach_host_proc_and_sysfs(const std::string& rootfs)
{
    for (const auto& m : read_mountinfo()) {
        if (m.root != "/" || (m.fstype != "proc" && m.fstype != "sysfs") || paths::within(m.mountpoint, rootfs))
            continue;
        const char* point = m.mountpoint.c_str();
        if (::mount(nullptr, point, nullptr, MS_SLAVE | MS_REC, nullptr) != 0) {
            if (errno == ENOENT) // below one detached already
                continue;
            throw_errno("making " + m.mountpoint + " a slave mount");
        }
        if (::umount2(point, MNT_DETACH) == 0)
            continue;
        if (errno != EINVAL && errno != EPERM)
            throw_errno("detaching " + m.mountpoint);
        check(::mount("tmpfs", point, "tmpfs", 0, nullptr), "covering " + m.mountpoint);
    }
}

} // namespace

MountFlags parse_options(const std::vector<std::string>& options)
{
    MountFlags out;
    for (const auto& opt : options) {
        bool known = false;
        for (const auto& f : option_flags)
            if (opt == f.name) {
                out.flags = f.clear ? (out.flags & ~f.flag) : (out.flags | f.flag);
                known = true;
            }
        for (const auto& [name, flag] : propagation_flags)
            if (opt == name) {
                out.propagation |= flag;
                known = true;
            }
        if (opt == "tmpcopyup") {
            out.tmpcopyup = true;
            known = true;
        }
        if (opt == "bind" || opt == "rbind") {
            out.bind = true;
            out.flags |= MS_BIND | (opt == "rbind" ? MS_REC : 0);
            known = true;
        }
        // "r" and a per-mount flag's name: the flag on every mount below too (runc's "rro" and its kind).
        for (const auto& f : option_flags)
            if (!known && opt.size() > 1 && opt[0] == 'r' && opt.compare(1, std::string::npos, f.name) == 0 &&
                (f.flag & per_mount_flags)) {
                (f.clear ? out.recursive_clear : out.recursive_set) |= f.flag;
                (f.clear ? out.recursive_set : out.recursive_clear) &= ~f.flag;
                known = true;
            }
        if (!known)
            out.data += (out.data.empty() ? "" : ",") + opt;
    }
    return out;
}

MountedRoot prepare_rootfs(const RootfsContext& ctx)
{
    const spec::Linux& linux = *ctx.spec.linux;
    // Our mounts must not propagate to the host. The propagation the config
    // asks for is applied once inside the new root (finish_rootfs): an
    // unbindable "/" could not be bound here. Without a mount namespace of
    // its own the container shares the host's, whose propagation stays as is.
    if (ctx.new_mount_namespace) {
        bool private_root = linux.rootfs_propagation == "private" || linux.rootfs_propagation == "rprivate";
        if (::mount(nullptr, "/", nullptr, (private_root ? MS_PRIVATE : MS_SLAVE) | MS_REC, nullptr) != 0)
            throw_errno("make / a " + std::string(private_root ? "private" : "slave") + " mount");
    }
    if (::mount(ctx.rootfs.c_str(), ctx.rootfs.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
        throw_errno("bind mount the rootfs " + ctx.rootfs);
    MountedRoot root(UniqueFd(::open(ctx.rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)));
    if (root.root() < 0)
        throw_errno("open the rootfs " + ctx.rootfs);
    for (size_t i = 0; i < ctx.spec.mounts.size(); ++i)
        mount_entry(ctx, root, ctx.spec.mounts[i], "mounts[" + std::to_string(i) + "]",
                    holds_later_mounts(ctx.spec.mounts, i));
    devices::create_all(root, linux.devices, ctx.in_user_namespace);
    make_dev_symlinks(root);
    return root;
}

void enter_rootfs(const MountedRoot& root, bool no_pivot, bool new_mount_namespace)
{
    if (::fchdir(root.root()) != 0)
        throw_errno("chdir to the rootfs");
    if (!new_mount_namespace) {
        // The host's mount namespace: pivot_root or a move would change the host's root.
        if (::chroot(".") != 0)
            throw_errno("chroot to the rootfs");
    } else if (no_pivot) {
        char rootfs[PATH_MAX];
        if (!::getcwd(rootfs, sizeof rootfs))
            throw_errno("getcwd in the rootfs");
        detach_host_proc_and_sysfs(rootfs);
        if (::mount(".", "/", nullptr, MS_MOVE, nullptr) != 0)
            throw_errno("move the rootfs to /");
        if (::chroot(".") != 0)
            throw_errno("chroot to the rootfs");
    } else {
        // pivot_root(".", ".") stacks the old root on top of the new one;
        // detaching "." afterwards removes it without a temporary directory.
        UniqueFd old_root(::open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC));
        if (!old_root)
            throw_errno("open /");
        if (::syscall(SYS_pivot_root, ".", ".") != 0)
            throw_errno("pivot_root to the rootfs");
        if (::fchdir(old_root.get()) != 0)
            throw_errno("fchdir to the old root");
        if (::mount(nullptr, ".", nullptr, MS_SLAVE | MS_REC, nullptr) != 0)
            throw_errno("make the old root a slave mount");
        if (::umount2(".", MNT_DETACH) != 0)
            throw_errno("unmount the old root");
    }
    if (::chdir("/") != 0)
        throw_errno("chdir /");
}

void finish_rootfs(const spec::Spec& spec, MountedRoot& root, const std::vector<PathMount>& path_mounts)
{
    const spec::Linux& linux = *spec.linux;
    mask_paths(linux.masked_paths, root);
    for (const auto& path : linux.readonly_paths)
        with_context("linux.readonlyPaths " + path, [&] {
            UniqueFd target = root.open(path, O_PATH);
            if (!target)
                return;
            UniqueFd tree = mount_api::clone(target.get(), "", true, path);
            mount_api::set_flags(tree.get(), MS_RDONLY, path);
            mount_api::attach(tree.get(), target.get(), path);
        });
    // A masked path is covered already (by /dev/null, or the tmpfs all masked
    // directories share, whose other names are those covers): the file a
    // denied rule names is not there to hide or to have other names.
    std::vector<PathMount> unmasked;
    for (const auto& m : path_mounts) {
        bool denied = m.kind == PathMount::Kind::hide || m.kind == PathMount::Kind::sole_name;
        if (!denied || std::find(linux.masked_paths.begin(), linux.masked_paths.end(), m.path) == linux.masked_paths.end())
            unmasked.push_back(m);
    }
    apply_path_mounts(unmasked);
    root.finish_read_only();
    if (spec.root.readonly)
        mount_api::set_flags(root.root(), MS_RDONLY, "/");
    for (const auto& [name, flag] : propagation_flags)
        if (linux.rootfs_propagation == name)
            mount_api::set_propagation(root.root(), flag, "/");
}

} // namespace cerberus::mounts
