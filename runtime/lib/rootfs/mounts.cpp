// SPDX-License-Identifier: Apache-2.0
#include "rootfs/mounts.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "rootfs/devices.hpp"
#include "rootfs/paths.hpp"
#include "rootfs/tmpcopyup.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
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

constexpr std::pair<const char*, unsigned long> propagation_flags[] = {
    {"private", MS_PRIVATE},         {"rprivate", MS_PRIVATE | MS_REC},       {"shared", MS_SHARED},
    {"rshared", MS_SHARED | MS_REC}, {"slave", MS_SLAVE},                     {"rslave", MS_SLAVE | MS_REC},
    {"unbindable", MS_UNBINDABLE},   {"runbindable", MS_UNBINDABLE | MS_REC},
};

// Flags the kernel keeps locked on a bind mount and that a remount must repeat.
unsigned long locked_flags(const std::string& path)
{
    struct statvfs st;
    if (::statvfs(path.c_str(), &st) != 0)
        return 0;
    unsigned long flags = 0;
    if (st.f_flag & ST_NOSUID)
        flags |= MS_NOSUID;
    if (st.f_flag & ST_NODEV)
        flags |= MS_NODEV;
    if (st.f_flag & ST_NOEXEC)
        flags |= MS_NOEXEC;
    if (st.f_flag & ST_RDONLY)
        flags |= MS_RDONLY;
    return flags;
}

void do_mount(const std::string& source, const std::string& target, const char* type, unsigned long flags,
              const std::string& data)
{
    if (::mount(source.empty() ? nullptr : source.c_str(), target.c_str(), type, flags,
                data.empty() ? nullptr : data.c_str()) != 0)
        throw_errno("mount " + (source.empty() ? std::string(type ? type : "") : source) + " on " + target +
                    (type ? std::string(" (") + type + ")" : ""));
}

void remount_bind(const std::string& target, unsigned long flags)
{
    unsigned long base = MS_BIND | MS_REMOUNT;
    if (::mount(nullptr, target.c_str(), nullptr, base | flags, nullptr) == 0)
        return;
    // In a user namespace the kernel refuses to drop locked flags: keep them.
    do_mount("", target, nullptr, base | flags | locked_flags(target), "");
}

void create_mount_point(const std::string& target, bool is_file)
{
    if (!is_file) {
        files::make_dirs(target);
        return;
    }
    files::make_dirs(target.substr(0, target.rfind('/')));
    UniqueFd fd(::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
    if (!fd && errno != EISDIR)
        throw_errno("create mount point " + target);
}

// As runc on a v1 or hybrid host: a tmpfs holding the container's own cgroup
// of each v1 hierarchy, bound with the mount's flags (no cgroup2, as runc), a
// symlink per controller of a shared hierarchy (cpu -> cpu,cpuacct), and the
// tmpfs read-only too when the mount is. Binds work in a user namespace.
void mount_cgroup_v1(const std::vector<CgroupV1View>& views, const std::string& target, unsigned long flags)
{
    const unsigned long tmpfs_flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    do_mount("tmpfs", target, "tmpfs", tmpfs_flags, "mode=755");
    for (const auto& view : views) {
        const std::string dest = target + "/" + view.name;
        files::make_dirs(dest);
        do_mount(view.source, dest, nullptr, MS_BIND | MS_REC, "");
        if (flags)
            remount_bind(dest, flags);
        for (size_t start = 0; view.name.find(',') != std::string::npos && start <= view.name.size();) {
            size_t end = std::min(view.name.find(',', start), view.name.size());
            std::string link = target + "/" + view.name.substr(start, end - start);
            if (::symlink(view.name.c_str(), link.c_str()) != 0 && errno != EEXIST)
                throw_errno("symlink " + link);
            start = end + 1;
        }
    }
    if (flags & MS_RDONLY)
        remount_bind(target, tmpfs_flags | MS_RDONLY);
}

void mount_entry(const RootfsContext& ctx, const spec::Mount& m)
{
    MountFlags opts = parse_options(m.options);
    std::string target = paths::secure_join(ctx.rootfs, m.destination);
    bool bind = opts.bind || m.type == "bind";
    if (bind) {
        struct stat st;
        if (::stat(m.source.c_str(), &st) != 0)
            throw_errno("bind source " + m.source);
        create_mount_point(target, !S_ISDIR(st.st_mode));
        do_mount(m.source, target, nullptr, MS_BIND | (opts.flags & MS_REC), "");
        unsigned long extra = opts.flags & ~(MS_REC | MS_BIND | MS_REMOUNT);
        if (extra)
            remount_bind(target, extra);
    } else {
        create_mount_point(target, false);
        unsigned long flags = opts.flags & ~MS_REC;
        if ((m.type == "cgroup" || m.type == "cgroup2") && !ctx.cgroup_v1.empty()) {
            mount_cgroup_v1(ctx.cgroup_v1, target, flags);
        } else if (m.type == "cgroup" || m.type == "cgroup2") {
            if (::mount("cgroup2", target.c_str(), "cgroup2", flags, nullptr) != 0) {
                // A user namespace without a cgroup namespace of its own may not
                // mount cgroupfs: give the host's hierarchies, as runc does.
                if (errno != EPERM || !ctx.in_user_namespace)
                    throw_errno("mount cgroup2 on " + target + " (cgroup2)");
                do_mount("/sys/fs/cgroup", target, nullptr, MS_BIND | MS_REC, "");
                remount_bind(target, flags | MS_RDONLY);
            }
        } else if (m.type == "sysfs" && ctx.in_user_namespace && !ctx.new_network_namespace) {
            // sysfs cannot be mounted from a user namespace that does not own the
            // network namespace: give the host's, read-only, as runc does.
            do_mount("/sys", target, nullptr, MS_BIND | MS_REC, "");
            remount_bind(target, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC);
        } else if (m.type == "mqueue" && ::mount(m.source.c_str(), target.c_str(), "mqueue", flags, nullptr) != 0) {
            // mqueue of the host's ipc namespace: bind it instead, as runc does.
            do_mount("/dev/mqueue", target, nullptr, MS_BIND, "");
        } else if (m.type == "tmpfs" && opts.tmpcopyup) {
            UniqueFd hidden(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            if (!hidden)
                throw_errno("open " + target);
            do_mount(m.source, target, "tmpfs", flags, opts.data);
            copy_up(hidden.get(), target);
        } else if (m.type != "mqueue") {
            do_mount(m.source, target, m.type.c_str(), flags, opts.data);
        }
    }
    if (opts.propagation)
        do_mount("", target, nullptr, opts.propagation, "");
}

void make_dev_symlinks(const std::string& rootfs)
{
    const std::pair<const char*, const char*> links[] = {
        {"/proc/self/fd", "/dev/fd"},         {"/proc/self/fd/0", "/dev/stdin"},
        {"/proc/self/fd/1", "/dev/stdout"},   {"/proc/self/fd/2", "/dev/stderr"},
    };
    for (const auto& [target, link] : links) {
        std::string path = rootfs + link;
        if (::symlink(target, path.c_str()) != 0 && errno != EEXIST)
            throw_errno("symlink " + path);
    }
    if (files::exists("/proc/kcore")) {
        std::string core = rootfs + "/dev/core";
        if (::symlink("/proc/kcore", core.c_str()) != 0 && errno != EEXIST)
            throw_errno("symlink " + core);
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
        if (!known)
            out.data += (out.data.empty() ? "" : ",") + opt;
    }
    return out;
}

void prepare_rootfs(const RootfsContext& ctx)
{
    const spec::Linux& linux = *ctx.spec.linux;
    // Our mounts must not propagate to the host. The propagation the config
    // asks for is applied once inside the new root (finish_rootfs): an
    // unbindable "/" could not be bound here. Without a mount namespace of
    // its own the container shares the host's, whose propagation stays as is.
    if (ctx.new_mount_namespace) {
        bool private_root = linux.rootfs_propagation == "private" || linux.rootfs_propagation == "rprivate";
        do_mount("", "/", nullptr, (private_root ? MS_PRIVATE : MS_SLAVE) | MS_REC, "");
    }
    do_mount(ctx.rootfs, ctx.rootfs, nullptr, MS_BIND | MS_REC, "");
    for (const auto& m : ctx.spec.mounts)
        with_context("mounts " + m.destination, [&] { mount_entry(ctx, m); });
    files::make_dirs(ctx.rootfs + "/dev");
    devices::create_all(ctx.rootfs, linux.devices, ctx.in_user_namespace);
    make_dev_symlinks(ctx.rootfs);
    if (files::exists(ctx.rootfs + "/dev/pts/ptmx")) {
        std::string ptmx = ctx.rootfs + "/dev/ptmx";
        ::unlink(ptmx.c_str());
        if (::symlink("pts/ptmx", ptmx.c_str()) != 0)
            throw_errno("symlink " + ptmx);
    }
}

void enter_rootfs(const std::string& rootfs, bool no_pivot, bool new_mount_namespace)
{
    if (::chdir(rootfs.c_str()) != 0)
        throw_errno("chdir " + rootfs);
    if (!new_mount_namespace) {
        // The host's mount namespace: pivot_root or a move would change the host's root.
        if (::chroot(".") != 0)
            throw_errno("chroot " + rootfs);
    } else if (no_pivot) {
        do_mount(rootfs, "/", nullptr, MS_MOVE, "");
        if (::chroot(".") != 0)
            throw_errno("chroot " + rootfs);
    } else {
        // pivot_root(".", ".") stacks the old root on top of the new one;
        // detaching "." afterwards removes it without a temporary directory.
        UniqueFd old_root(::open("/", O_DIRECTORY | O_RDONLY | O_CLOEXEC));
        if (!old_root)
            throw_errno("open /");
        if (::syscall(SYS_pivot_root, ".", ".") != 0)
            throw_errno("pivot_root " + rootfs);
        if (::fchdir(old_root.get()) != 0)
            throw_errno("fchdir to the old root");
        do_mount("", ".", nullptr, MS_SLAVE | MS_REC, "");
        if (::umount2(".", MNT_DETACH) != 0)
            throw_errno("unmount the old root");
    }
    if (::chdir("/") != 0)
        throw_errno("chdir /");
}

void finish_rootfs(const spec::Spec& spec, const std::vector<PathMount>& path_mounts)
{
    const spec::Linux& linux = *spec.linux;
    // Masked directories share one empty read-only tmpfs: each new superblock
    // registers a kernel shrinker, and every 64th makes the kernel resize the
    // shrinker maps of every memory cgroup (create slows as containers add up).
    std::string first_masked_dir;
    for (const auto& path : linux.masked_paths) {
        struct stat st;
        if (::stat(path.c_str(), &st) != 0) {
            if (errno == ENOENT)
                continue;
            throw_errno("masked path " + path);
        }
        if (!S_ISDIR(st.st_mode)) {
            do_mount("/dev/null", path, nullptr, MS_BIND, "");
        } else if (first_masked_dir.empty()) {
            do_mount("tmpfs", path, "tmpfs", MS_RDONLY, "");
            first_masked_dir = path;
        } else {
            do_mount(first_masked_dir, path, nullptr, MS_BIND, "");
            remount_bind(path, MS_RDONLY);
        }
    }
    for (const auto& path : linux.readonly_paths) {
        if (::mount(path.c_str(), path.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
            if (errno == ENOENT)
                continue;
            throw_errno("readonly path " + path);
        }
        remount_bind(path, MS_RDONLY | MS_REC);
    }
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
    if (spec.root.readonly)
        remount_bind("/", MS_RDONLY);
    for (const auto& [name, flag] : propagation_flags)
        if (linux.rootfs_propagation == name)
            do_mount("", "/", nullptr, flag, "");
}

} // namespace cerberus::mounts
