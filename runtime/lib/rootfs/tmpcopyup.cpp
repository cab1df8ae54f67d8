// SPDX-License-Identifier: Apache-2.0
#include "rootfs/tmpcopyup.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"

#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>


namespace cerberus::mounts {
namespace {

void copy_file(int from_dir, int to_dir, const char* name, const struct stat& st)
{
    UniqueFd in(::openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!in)
        throw_errno(std::string("open ") + name);
    UniqueFd out(::openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 07777));
    if (!out)
        throw_errno(std::string("create ") + name);
    for (off_t left = st.st_size; left > 0;) {
        ssize_t n = ::sendfile(out.get(), in.get(), nullptr, static_cast<size_t>(left));
        if (n < 0)
            throw_errno(std::string("copy ") + name);
        if (n == 0)
            break; // the file shrank meanwhile
        left -= n;
    }
}

void copy_entries(int from_dir, int to_dir, const std::string& where)
{
    for (const auto& entry : files::list_dir(from_dir, where)) {
        const std::string& name = entry.name;
        with_context(where + "/" + name, [&] {
            struct stat st;
            check(::fstatat(from_dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW), "stat");
            if (S_ISDIR(st.st_mode)) {
                check(::mkdirat(to_dir, name.c_str(), st.st_mode & 07777), "mkdir");
                UniqueFd from(check(::openat(from_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
                                    "open"));
                UniqueFd to(check(::openat(to_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC),
                                  "open copy"));
                copy_entries(from.get(), to.get(), where + "/" + name);
            } else if (S_ISREG(st.st_mode)) {
                copy_file(from_dir, to_dir, name.c_str(), st);
            } else if (S_ISLNK(st.st_mode)) {
                std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
                ssize_t n = check(::readlinkat(from_dir, name.c_str(), target.data(), target.size()), "readlink");
                target.resize(static_cast<size_t>(n));
                check(::symlinkat(target.c_str(), to_dir, name.c_str()), "symlink");
            } else {
                check(::mknodat(to_dir, name.c_str(), st.st_mode, st.st_rdev), "mknod");
            }
            check(::fchownat(to_dir, name.c_str(), st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW), "chown");
            // After chown, which clears set-id bits, and whatever the umask took.
            if (!S_ISLNK(st.st_mode))
                check(::fchmodat(to_dir, name.c_str(), st.st_mode & 07777, 0), "chmod");
        });
    }
}

} // namespace

void copy_up(int hidden_dir, int to_dir, const std::string& where)
{
    with_context("tmpcopyup to " + where, [&] { copy_entries(hidden_dir, to_dir, "."); });
}

} // namespace cerberus::mounts
