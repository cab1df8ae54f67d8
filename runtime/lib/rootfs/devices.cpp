// SPDX-License-Identifier: Apache-2.0
#include "rootfs/devices.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "rootfs/mount_api.hpp"
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

// Owner and mode of the node made, set through an O_PATH fd on it, checked to
// be that node: a racing process may swap the name, never what is changed.
void set_owner_and_mode(int node, const spec::Device& d, mode_t mode)
{
    struct stat st;
    check(::fstat(node, &st), "stat");
    if ((st.st_mode & S_IFMT) != (mode & S_IFMT) || (!S_ISFIFO(mode) && st.st_rdev != makedev(d.major, d.minor)))
        throw Error("the node made was replaced", EEXIST);
    // mknod honours the umask; chmod sets the mode the spec asked for. Before
    // pivot_root /proc is the host's: its self/fd link is the node itself.
    std::string self = "/proc/self/fd/" + std::to_string(node);
    check(::chmod(self.c_str(), mode & 07777), "chmod");
    check(::fchownat(node, "", d.uid.value_or(0), d.gid.value_or(0), AT_EMPTY_PATH), "chown");
}

// The node, made in its directory's fd. Returns an O_PATH fd on it.
UniqueFd create_one(const mounts::MountedRoot& root, const spec::Device& d, bool in_user_namespace)
{
    std::string dir = d.path.substr(0, d.path.rfind('/'));
    std::string name = d.path.substr(d.path.rfind('/') + 1);
    UniqueFd parent = root.make(dir.empty() ? "/" : dir, paths::Leaf::directory);
    if (in_user_namespace) {
        UniqueFd target = paths::make(parent.get(), name, paths::Leaf::file, paths::no_symlinks);
        UniqueFd host = mount_api::clone(AT_FDCWD, d.path, false, d.path);
        mount_api::attach(host.get(), target.get(), d.path);
        return paths::open(parent.get(), name, O_PATH, paths::no_symlinks);
    }
    ::unlinkat(parent.get(), name.c_str(), 0);
    mode_t mode = type_bits(d.type) | (d.file_mode ? *d.file_mode & 07777 : 0666);
    check(::mknodat(parent.get(), name.c_str(), mode, makedev(d.major, d.minor)), "mknod");
    UniqueFd node(check(::openat(parent.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC), "open"));
    set_owner_and_mode(node.get(), d, mode);
    return node;
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

void create_all(mounts::MountedRoot& root, const std::vector<spec::Device>& extra, bool in_user_namespace)
{
    auto create = [&](const std::string& field, const spec::Device& d) {
        UniqueFd node = with_context(field + " " + d.path, [&] { return create_one(root, d, in_user_namespace); });
        // Kept from the moment it is made: masked files are covered with it.
        if (paths::clean(d.path) == "/dev/null")
            root.set_null(std::move(node));
    };
    for (const auto& d : defaults()) {
        bool overridden = false;
        for (const auto& e : extra)
            overridden = overridden || e.path == d.path;
        if (!overridden)
            create("default device", d);
    }
    for (const auto& d : extra)
        create("linux.devices", d);
}

} // namespace cerberus::devices
