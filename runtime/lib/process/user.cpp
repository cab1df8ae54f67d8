// SPDX-License-Identifier: Apache-2.0
#include "process/user.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <string>

namespace cerberus::user {

namespace {

static_assert(sizeof(gid_t) == sizeof(uint32_t), "additionalGids are passed to setgroups as they are");

// In a user namespace whose gid map was written unprivileged, setgroups is
// denied; a missing /proc (no mount in the container) counts as allowed.
bool setgroups_denied()
{
    UniqueFd fd(open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC));
    if (!fd) {
        if (errno == ENOENT)
            return false;
        throw_errno("open /proc/self/setgroups");
    }
    char buf[16] = {};
    check(read(fd.get(), buf, sizeof(buf) - 1), "read /proc/self/setgroups");
    return std::strncmp(buf, "deny", 4) == 0;
}

[[noreturn]] void throw_id_error(const char* call, uint32_t id)
{
    int err = errno;
    std::string what = std::string(call) + " " + std::to_string(id);
    if (err == EINVAL)
        what += " (not mapped in the user namespace)";
    throw_errno(what, err);
}

// The sixth field of the first "name:password:uid:gid:gecos:home:shell" line
// whose uid is uid.
std::optional<std::string> home_in_passwd(const std::string& passwd, uint32_t uid)
{
    std::istringstream lines(passwd);
    for (std::string line; std::getline(lines, line);) {
        std::vector<std::string> fields;
        std::istringstream parts(line);
        for (std::string field; std::getline(parts, field, ':');)
            fields.push_back(field);
        if (fields.size() >= 6 && fields[2] == std::to_string(uid))
            return fields[5];
    }
    return std::nullopt;
}

} // namespace

std::vector<std::string> environment_with_home(const std::vector<std::string>& env, uint32_t uid,
                                               const std::string& passwd_path)
{
    std::vector<std::string> out;
    for (const auto& e : env)
        if (e != "HOME=")
            out.push_back(e);
    for (const auto& e : out)
        if (e.rfind("HOME=", 0) == 0)
            return out;
    std::optional<std::string> home;
    if (auto passwd = files::read_file_if_exists(passwd_path))
        home = home_in_passwd(*passwd, uid);
    out.push_back("HOME=" + (home && !home->empty() ? *home : std::string("/")));
    return out;
}

// Raw syscalls rather than glibc's wrappers: after clone() glibc's thread
// bookkeeping (used to broadcast setxid to all threads) is not ours to trust.
void apply_user(const spec::User& user)
{
    if (setgroups_denied()) {
        if (!user.additional_gids.empty())
            throw Error("process.user.additionalGids: setgroups is denied in this user namespace", EPERM);
    } else {
        check(syscall(SYS_setgroups, user.additional_gids.size(), user.additional_gids.data()),
              "setgroups");
    }

    // Keep the permitted set across setuid; apply_capabilities then sets it exactly.
    check(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "prctl(PR_SET_KEEPCAPS)");
    if (syscall(SYS_setresgid, user.gid, user.gid, user.gid) < 0)
        throw_id_error("setgid", user.gid);
    if (syscall(SYS_setresuid, user.uid, user.uid, user.uid) < 0)
        throw_id_error("setuid", user.uid);
    check(prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0), "prctl(PR_SET_KEEPCAPS)");

    umask(static_cast<mode_t>(user.umask.value_or(022)));
}

} // namespace cerberus::user
