// SPDX-License-Identifier: Apache-2.0
#include "process/console.hpp"

#include "base/error.hpp"
#include "base/unix_socket.hpp"
#include "rootfs/mount_api.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <termios.h>
#include <unistd.h>


namespace cerberus::console {

UniqueFd connect_socket(const std::string& path)
{
    return with_context("--console-socket " + path, [&] { return unix_socket::connect(path); });
}

namespace {

constexpr unsigned ptmx_major = 5, ptmx_minor = 2; // TTYAUX_MAJOR; the ptmx of every devpts

// The container's /dev/pts/ptmx, opened for real only once it is known to be
// the ptmx of a devpts (never a symlink, never another device or file).
UniqueFd open_ptmx(const mounts::MountedRoot* root)
{
    constexpr int flags = O_RDWR | O_NOCTTY | O_NONBLOCK;
    UniqueFd ptmx;
    if (root) {
        ptmx = root->open("/dev/pts/ptmx", flags, paths::no_symlinks);
    } else {
        UniqueFd slash(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        ptmx = paths::open(slash.get(), "/dev/pts/ptmx", flags, paths::no_symlinks);
    }
    if (!ptmx)
        throw_errno("open /dev/pts/ptmx");
    struct statfs fs;
    struct stat st;
    if (::fstatfs(ptmx.get(), &fs) != 0 || fs.f_type != DEVPTS_SUPER_MAGIC || ::fstat(ptmx.get(), &st) != 0 ||
        !S_ISCHR(st.st_mode) || st.st_rdev != makedev(ptmx_major, ptmx_minor))
        throw Error("/dev/pts/ptmx is not the ptmx of a devpts", ENODEV);
    check(::fcntl(ptmx.get(), F_SETFL, O_RDWR), "clear O_NONBLOCK on /dev/pts/ptmx");
    return ptmx;
}

// Binds the pty over /dev/console, made if missing: never through a symlink
// (CVE-2025-52565), and the pty by its fd, never by a /dev/pts name.
void bind_console(const mounts::MountedRoot& root, int peer)
{
    UniqueFd console;
    try {
        console = root.make("/dev/console", paths::Leaf::file, paths::no_symlinks);
    } catch (const Error& e) {
        if (e.errnum() != ELOOP)
            throw;
        throw Error("/dev/console of the container is, or is reached through, a symlink: not followed",
                    ELOOP);
    }
    UniqueFd pty = mount_api::clone(peer, "", false, "/dev/console");
    mount_api::attach(pty.get(), console.get(), "/dev/console");
}

} // namespace

void setup_terminal(int socket_fd, const std::optional<spec::ConsoleSize>& size, uid_t owner,
                    const mounts::MountedRoot* root)
{
    UniqueFd master = with_context("process.terminal", [&] { return open_ptmx(root); });
    if (::unlockpt(master.get()) != 0)
        throw_errno("unlockpt");
    char name[128];
    if (::ptsname_r(master.get(), name, sizeof name) != 0)
        throw_errno("ptsname");
    if (size) {
        struct winsize ws = {};
        ws.ws_row = size->height;
        ws.ws_col = size->width;
        ::ioctl(master.get(), TIOCSWINSZ, &ws);
    }
    // The peer from the master itself: its name is the container's to change.
    UniqueFd slave(::ioctl(master.get(), TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!slave)
        throw_errno(std::string("open the peer of the pty ") + name);
    // EINVAL: the uid is not mapped in the container's user namespace; the pty then stays root's.
    if (::fchown(slave.get(), owner, static_cast<gid_t>(-1)) != 0 && errno != EINVAL)
        throw_errno(std::string("chown the pty ") + name + " to process.user.uid " + std::to_string(owner));
    if (root)
        with_context("process.terminal", [&] { bind_console(*root, slave.get()); });
    // With the pty's name, as runc's recvtty expects.
    with_context("sending the terminal to the console socket",
                 [&] { unix_socket::send_with_fd(socket_fd, name, master.get()); });
    if (::setsid() < 0)
        throw_errno("setsid");
    if (::ioctl(slave.get(), TIOCSCTTY, 0) != 0)
        throw_errno("TIOCSCTTY");
    for (int target = 0; target < 3; ++target)
        if (::dup2(slave.get(), target) < 0)
            throw_errno("dup2 terminal");
}

} // namespace cerberus::console
