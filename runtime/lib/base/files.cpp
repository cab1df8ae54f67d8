// SPDX-License-Identifier: Apache-2.0
#include "base/files.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>
#include <string_view>

namespace cerberus::files {

std::string read_file(const std::string& path)
{
    std::optional<std::string> content = read_file_if_exists(path);
    if (!content)
        throw_errno("open " + path, ENOENT);
    return *content;
}

std::optional<std::string> read_file_if_exists(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd && errno == ENOENT)
        return std::nullopt;
    if (!fd)
        throw_errno("open " + path);
    std::string content;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw_errno("read " + path);
        if (n == 0)
            return content;
        content.append(buf, n);
    }
}

static void write_all(int fd, const std::string& content, const std::string& path)
{
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw_errno("writing \"" + content.substr(0, 64) + "\" to " + path);
        done += n;
    }
}

void write_file(const std::string& path, const std::string& content)
{
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_TRUNC));
    if (!fd)
        throw_errno("open " + path);
    write_all(fd.get(), content, path);
}

void write_file_atomic(const std::string& path, const std::string& content, unsigned mode)
{
    std::string tmp = path + ".tmp." + std::to_string(::getpid());
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode));
    if (!fd)
        throw_errno("create " + tmp);
    write_all(fd.get(), content, tmp);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        throw_errno("rename " + tmp + " to " + path, err);
    }
}

bool exists(const std::string& path)
{
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
}

std::vector<DirEntry> list_dir(int dir_fd, const std::string& where)
{
    // A new open of the directory: its own read position, and closedir closes only it.
    std::unique_ptr<DIR, int (*)(DIR*)> dir(nullptr, ::closedir);
    if (int own = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); own >= 0) {
        dir.reset(::fdopendir(own));
        if (!dir)
            ::close(own);
    }
    if (!dir)
        throw_errno("listing " + where);
    std::vector<DirEntry> entries;
    errno = 0;
    while (const dirent* entry = ::readdir(dir.get())) {
        std::string_view name = entry->d_name;
        if (name != "." && name != "..")
            entries.push_back({std::string(name), entry->d_type});
    }
    if (errno != 0)
        throw_errno("listing " + where);
    return entries;
}

std::vector<DirEntry> list_dir(const std::string& path)
{
    UniqueFd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir && errno == ENOENT)
        return {};
    if (!dir)
        throw_errno("listing " + path);
    return list_dir(dir.get(), path);
}

void make_dirs(const std::string& path, unsigned mode)
{
    // The whole path first: it usually exists already, or lacks only its last part.
    if (::mkdir(path.c_str(), mode) == 0 || errno == EEXIST)
        return;
    auto slash = path.find_last_of('/');
    if (errno != ENOENT || slash == 0 || slash == std::string::npos)
        throw_errno("mkdir " + path);
    make_dirs(path.substr(0, slash), mode);
    if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST)
        throw_errno("mkdir " + path);
}

std::optional<std::string> read_host_file(const std::string& path, const std::string& what)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT)
            return std::nullopt;
        throw_errno("opening " + path);
    }
    struct stat st{};
    check(fstat(fd.get(), &st), "fstat " + path);
    if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
        throw Error(path + ": " + what + " must be a regular file of root's that no one else may write", EPERM);
    return files::read_file("/proc/self/fd/" + std::to_string(fd.get()));
}

} // namespace cerberus::files
