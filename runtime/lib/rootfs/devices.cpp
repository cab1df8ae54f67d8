// SPDX-License-Identifier: Apache-2.0
#include "rootfs/devices.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "rootfs/paths.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

namespace cerberus::devices {
namespace {

spec::Device char_device(const char* path, int major, int minor)
{
    spec::Device d;
    d.type = "c";
    d.path = path;
    d.major = major;
    d.minor = minor;
    d.file_mode = 0666;
    d.uid = 0;
    d.gid = 0;
    return d;
}

mode_t type_bits(const std::string& type)
{
    if (type == "b")
        return S_IFBLK;
    if (type == "p")
        return S_IFIFO;
    return S_IFCHR; // "c" and "u"
}

void create_one(const std::string& rootfs, const spec::Device& d, bool in_user_namespace)
{
    std::string target = paths::secure_join(rootfs, d.path);
    files::make_dirs(target.substr(0, target.rfind('/')));
    if (in_user_namespace) {
        UniqueFd fd(::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
        if (!fd && errno != EEXIST)
            throw_errno("create device mount point " + target);
        if (::mount(d.path.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0)
            throw_errno("bind device " + d.path + " on " + target);
        return;
    }
    ::unlink(target.c_str());
    mode_t mode = type_bits(d.type) | (d.file_mode ? *d.file_mode & 07777 : 0666);
    if (::mknod(target.c_str(), mode, makedev(d.major, d.minor)) != 0)
        throw_errno("mknod " + target);
    // mknod honours the umask; chmod sets the mode the spec asked for.
    if (::chmod(target.c_str(), mode & 07777) != 0)
        throw_errno("chmod " + target);
    if (::chown(target.c_str(), d.uid.value_or(0), d.gid.value_or(0)) != 0)
        throw_errno("chown " + target);
}

} // namespace

const std::vector<spec::Device>& defaults()
{
    static const std::vector<spec::Device> list = {
        char_device("/dev/null", 1, 3),   char_device("/dev/zero", 1, 5), char_device("/dev/full", 1, 7),
        char_device("/dev/random", 1, 8), char_device("/dev/urandom", 1, 9), char_device("/dev/tty", 5, 0),
    };
    return list;
}

void create_all(const std::string& rootfs, const std::vector<spec::Device>& extra, bool in_user_namespace)
{
    for (const auto& d : defaults()) {
        bool overridden = false;
        for (const auto& e : extra)
            overridden = overridden || e.path == d.path;
        if (!overridden)
            with_context("default device " + d.path, [&] { create_one(rootfs, d, in_user_namespace); });
    }
    for (const auto& d : extra)
        with_context("linux.devices " + d.path, [&] { create_one(rootfs, d, in_user_namespace); });
}

} // namespace cerberus::devices
