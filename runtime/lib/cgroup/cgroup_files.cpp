// SPDX-License-Identifier: Apache-2.0
#include "cgroup/cgroup_files.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "base/fd.hpp"
#include "base/numbers.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cerberus::cgroups {

void write_control(const std::string& path, const std::string& value, bool create)
{
    const std::string what = "writing \"" + value + "\" to " + path;
    // A stand-in file keeps every value written, one a line, for tests to read.
    int flags = O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_APPEND : 0);
    UniqueFd fd(::open(path.c_str(), flags, 0644));
    if (!fd)
        throw_errno(what);
    ssize_t n;
    do
        n = ::write(fd.get(), value.data(), value.size());
    while (n < 0 && errno == EINTR);
    if (n < 0)
        throw_errno(what);
    if (create && ::write(fd.get(), "\n", 1) < 0)
        throw_errno(what);
}

std::optional<std::string> read_control_if_exists(const std::string& path)
{
    std::optional<std::string> content = files::read_file_if_exists(path);
    if (!content)
        return std::nullopt;
    if (!content->empty() && content->back() == '\n')
        content->pop_back();
    return content;
}

std::string read_control(const std::string& path)
{
    auto content = read_control_if_exists(path);
    if (!content)
        throw_errno("reading " + path, ENOENT);
    return *content;
}

bool control_exists(const std::string& path)
{
    struct stat st;
    return ::stat(path.c_str(), &st) == 0;
}

int remove_cgroup_dir(const std::string& dir, bool with_files)
{
    if (with_files)
        for (const auto& entry : files::list_dir(dir))
            if (entry.type == DT_REG)
                ::unlink((dir + "/" + entry.name).c_str());
    return ::rmdir(dir.c_str());
}

uint64_t parse_control_u64(const std::string& text, const std::string& path)
{
    if (text == "max" || text == "-1")
        return UINT64_MAX;
    auto value = parse_whole<uint64_t>(text);
    if (!value)
        throw Error("parsing " + path + ": \"" + text + "\" is not a number", EINVAL);
    return *value;
}

} // namespace cerberus::cgroups
