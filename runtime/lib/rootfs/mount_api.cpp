// SPDX-License-Identifier: Apache-2.0
#include "rootfs/mount_api.hpp"

#include "base/error.hpp"

#include <fcntl.h>
#include <linux/mount.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace cerberus::mount_api {
namespace {

constexpr unsigned long all_attrs = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC |
                                    MOUNT_ATTR_NODIRATIME | MOUNT_ATTR__ATIME;

// The per-mount part of MS_* flags; relatime unless another atime is asked, as mount(2).
unsigned long attrs_of(unsigned long flags)
{
    constexpr std::pair<unsigned long, unsigned long> per_mount[] = {
        {MS_RDONLY, MOUNT_ATTR_RDONLY}, {MS_NOSUID, MOUNT_ATTR_NOSUID},         {MS_NODEV, MOUNT_ATTR_NODEV},
        {MS_NOEXEC, MOUNT_ATTR_NOEXEC}, {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME},
    };
    unsigned long attrs = 0;
    for (const auto& [flag, attr] : per_mount)
        if (flags & flag)
            attrs |= attr;
    if (flags & MS_NOATIME)
        attrs |= MOUNT_ATTR_NOATIME;
    else if (flags & MS_STRICTATIME)
        attrs |= MOUNT_ATTR_STRICTATIME;
    return attrs;
}

// What the file system said about a failed fsconfig (its log, "e ..." lines).
std::string context_log(int context)
{
    std::string said;
    char line[512];
    ssize_t n;
    while ((n = ::read(context, line, sizeof line - 1)) > 0) {
        line[n] = 0;
        said += (said.empty() ? "" : "; ") + std::string(line[0] && line[1] == ' ' ? line + 2 : line);
    }
    return said;
}

void configure(int context, unsigned cmd, const char* key, const char* value, const std::string& what)
{
    if (::fsconfig(context, cmd, key, value, 0) == 0)
        return;
    int err = errno;
    std::string said = context_log(context);
    std::string option = key ? std::string(key) + (value ? "=" + std::string(value) : "") : "";
    throw_errno(what + (option.empty() ? "" : " (" + option + ")") + (said.empty() ? "" : " [" + said + "]"), err);
}

} // namespace

UniqueFd create(const std::string& type, const std::string& source, unsigned long flags, const std::string& data,
                const std::string& what)
{
    std::string action = "mount " + type + " on " + what;
    UniqueFd context(::fsopen(type.c_str(), FSOPEN_CLOEXEC));
    if (!context)
        throw_errno(action);
    if (!source.empty())
        configure(context.get(), FSCONFIG_SET_STRING, "source", source.c_str(), action);
    for (size_t start = 0; start < data.size();) {
        size_t end = data.find(',', start);
        if (end == std::string::npos)
            end = data.size();
        std::string option = data.substr(start, end - start);
        size_t eq = option.find('=');
        if (eq == std::string::npos && !option.empty())
            configure(context.get(), FSCONFIG_SET_FLAG, option.c_str(), nullptr, action);
        else if (!option.empty())
            configure(context.get(), FSCONFIG_SET_STRING, option.substr(0, eq).c_str(), option.c_str() + eq + 1, action);
        start = end + 1;
    }
    // The flags mount(2) gives the superblock.
    constexpr std::pair<unsigned long, const char*> superblock_flags[] = {
        {MS_RDONLY, "ro"}, {MS_SYNCHRONOUS, "sync"}, {MS_DIRSYNC, "dirsync"}, {MS_MANDLOCK, "mand"}};
    for (const auto& [flag, name] : superblock_flags)
        if (flags & flag)
            configure(context.get(), FSCONFIG_SET_FLAG, name, nullptr, action);
    configure(context.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, action);
    UniqueFd mount(::fsmount(context.get(), FSMOUNT_CLOEXEC, static_cast<unsigned>(attrs_of(flags))));
    if (!mount)
        throw_errno(action);
    return mount;
}

UniqueFd clone(int dirfd, const std::string& path, bool recursive, const std::string& what)
{
    unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0) | (path.empty() ? AT_EMPTY_PATH : 0);
    UniqueFd tree(::open_tree(dirfd, path.c_str(), flags));
    if (!tree)
        throw_errno("bind mount " + (path.empty() ? what : path + " on " + what));
    return tree;
}

void set_flags(int mount, unsigned long flags, const std::string& what)
{
    mount_attr attr{};
    attr.attr_set = attrs_of(flags);
    attr.attr_clr = all_attrs;
    if (::mount_setattr(mount, "", AT_EMPTY_PATH, &attr, sizeof attr) == 0)
        return;
    struct statvfs st;
    if (errno != EPERM || ::fstatvfs(mount, &st) != 0)
        throw_errno("set the flags of " + what);
    // In a user namespace the kernel refuses to drop locked flags: keep them.
    unsigned long locked = (st.f_flag & ST_NOSUID ? MS_NOSUID : 0) | (st.f_flag & ST_NODEV ? MS_NODEV : 0) |
                           (st.f_flag & ST_NOEXEC ? MS_NOEXEC : 0) | (st.f_flag & ST_RDONLY ? MS_RDONLY : 0);
    attr.attr_set = attrs_of(flags | locked);
    if (::mount_setattr(mount, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0)
        throw_errno("set the flags of " + what);
}

void set_recursive(int mount, unsigned long set, unsigned long clear, const std::string& what)
{
    constexpr unsigned long atime_modes = MS_NOATIME | MS_STRICTATIME | MS_RELATIME;
    mount_attr attr{};
    attr.attr_set = attrs_of(set);
    attr.attr_clr = attrs_of(clear & ~atime_modes);
    if ((set | clear) & atime_modes)
        attr.attr_clr |= MOUNT_ATTR__ATIME;
    if (::mount_setattr(mount, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
        throw_errno("set the recursive flags of " + what);
}

void set_propagation(int mount, unsigned long propagation, const std::string& what)
{
    mount_attr attr{};
    attr.propagation = propagation & ~MS_REC;
    unsigned flags = AT_EMPTY_PATH | (propagation & MS_REC ? AT_RECURSIVE : 0);
    if (::mount_setattr(mount, "", flags, &attr, sizeof attr) != 0)
        throw_errno("set the propagation of " + what);
}

void attach(int mount, int target, const std::string& what)
{
    if (::move_mount(mount, "", target, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        throw_errno("mount on " + what);
}

} // namespace cerberus::mount_api
