// SPDX-License-Identifier: Apache-2.0
#include "process/sealed_exe.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <climits>
#include <cstring>

extern char** environ;

namespace cerberus::sealed_exe {
namespace {

// Newer than this system's kernel headers (Linux 6.3): an executable memfd
// where vm.memfd_noexec would refuse one, and a seal on its mode bits.
constexpr unsigned memfd_exec = 0x0010;
constexpr int seal_exec = 0x0020;
constexpr int base_seals = F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;

std::string own_binary_path()
{
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n < 0)
        throw_errno("readlink /proc/self/exe");
    return std::string(buf, n);
}

// overlayfs separates layers with ':' and escapes with '\'.
std::string escape_layer(const std::string& path)
{
    std::string out;
    for (char c : path) {
        if (c == ':' || c == '\\')
            out += '\\';
        out += c;
    }
    return out;
}

// A handle on our binary through a read-only overlayfs that is mounted
// nowhere: nothing can remount it writable or reach the file beneath it.
UniqueFd open_through_overlay(const std::string& scratch_dir)
{
    std::string binary = own_binary_path();
    size_t slash = binary.rfind('/');
    if (binary.empty() || binary[0] != '/' || slash == std::string::npos)
        throw Error("/proc/self/exe is not an absolute path: " + binary, ENOENT);
    std::string dir = slash == 0 ? "/" : binary.substr(0, slash);
    std::string name = binary.substr(slash + 1);

    UniqueFd context(::fsopen("overlay", FSOPEN_CLOEXEC));
    if (!context)
        throw_errno("fsopen overlay");
    // Without an upper layer overlayfs wants two lower ones; ours comes first,
    // so nothing in scratch_dir can hide the binary.
    std::string layers = escape_layer(dir) + ":" + escape_layer(scratch_dir);
    if (::fsconfig(context.get(), FSCONFIG_SET_STRING, "lowerdir", layers.c_str(), 0) != 0)
        throw_errno("overlayfs lowerdir=" + layers);
    ::fsconfig(context.get(), FSCONFIG_SET_STRING, "xino", "off", 0); // only quiets the kernel log
    if (::fsconfig(context.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        throw_errno("create overlayfs over " + dir);
    UniqueFd mount(::fsmount(context.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID));
    if (!mount)
        throw_errno("fsmount overlayfs over " + dir);
    UniqueFd exe(::openat(mount.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!exe)
        throw_errno("open " + name + " through the overlayfs");
    return exe;
}

// A private copy whose seals forbid any write, for kernels without overlayfs
// or the mount API.
UniqueFd sealed_copy()
{
    UniqueFd copy(::memfd_create("cerberus-sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING | memfd_exec));
    if (!copy && errno == EINVAL)
        copy = UniqueFd(::memfd_create("cerberus-sealed", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!copy)
        throw_errno("memfd_create");
    UniqueFd self(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    struct stat st;
    if (!self || ::fstat(self.get(), &st) != 0)
        throw_errno("open /proc/self/exe");
    for (off_t copied = 0; copied < st.st_size;) {
        ssize_t n = ::sendfile(copy.get(), self.get(), nullptr, st.st_size - copied);
        if (n <= 0)
            throw_errno("copy /proc/self/exe into a memfd", n == 0 ? EIO : errno);
        copied += n;
    }
    ::fcntl(copy.get(), F_ADD_SEALS, seal_exec); // Linux 6.3; the base seals suffice
    if (::fchmod(copy.get(), 0511) != 0 || ::fcntl(copy.get(), F_ADD_SEALS, base_seals) != 0)
        throw_errno("seal the memfd copy of the runtime");
    return copy;
}

} // namespace

bool running_sealed()
{
    UniqueFd self(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    if (!self)
        return false;
    int seals = ::fcntl(self.get(), F_GET_SEALS);
    if (seals >= 0)
        return (seals & base_seals) == base_seals;
    struct statfs fs;
    return ::fstatfs(self.get(), &fs) == 0 && fs.f_type == OVERLAYFS_SUPER_MAGIC && (fs.f_flags & ST_RDONLY);
}

void reexec_sealed(char** argv, const std::string& scratch_dir)
{
    if (running_sealed()) {
        // execveat named us after the fd number; ps and pidof expect ours.
        const char* slash = std::strrchr(argv[0], '/');
        ::prctl(PR_SET_NAME, slash ? slash + 1 : argv[0], 0, 0, 0);
        return;
    }
    UniqueFd exe;
    std::string overlay_error;
    try {
        exe = open_through_overlay(scratch_dir);
    } catch (const Error& e) {
        overlay_error = e.what();
    }
    if (!exe) {
        exe = with_context("sealing the runtime binary (" + overlay_error + "; then a memfd copy)",
                           [] { return sealed_copy(); });
    }
    ::execveat(exe.get(), "", argv, environ, AT_EMPTY_PATH);
    throw_errno("re-executing the sealed runtime binary");
}

void stop_being_dumpable()
{
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        throw_errno("prctl PR_SET_DUMPABLE 0");
}

} // namespace cerberus::sealed_exe
