// SPDX-License-Identifier: Apache-2.0
#include "broker/tool_user.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace cerberus::broker {
namespace {

constexpr uid_t nobody_uid = 65534;
constexpr gid_t nobody_gid = 65534;

// A user namespace whose only ids are from_uid and from_gid, standing for to_uid and to_gid:
// made by a child that unshares and waits until its maps are written and its namespace opened.
UniqueFd mapping_namespace(unsigned from_uid, unsigned from_gid, uid_t to_uid, gid_t to_gid)
{
    int unshared[2], done[2];
    check(pipe2(unshared, O_CLOEXEC), "pipe");
    UniqueFd unshared_read(unshared[0]), unshared_write(unshared[1]);
    check(pipe2(done, O_CLOEXEC), "pipe");
    UniqueFd done_read(done[0]), done_write(done[1]);
    pid_t child = fork();
    if (child < 0)
        throw_errno("fork");
    if (child == 0) {
        char byte = unshare(CLONE_NEWUSER) == 0 ? 'u' : 'e';
        if (write(unshared[1], &byte, 1) != 1)
            _exit(1);
        close(done[1]);
        while (read(done[0], &byte, 1) > 0) {
        }
        _exit(0);
    }
    unshared_write.reset();
    done_read.reset();
    auto reap = [&] {
        done_write.reset();
        while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
        }
    };
    try {
        char byte = 0;
        if (read(unshared_read.get(), &byte, 1) != 1 || byte != 'u')
            throw Error("making the tool's user namespace: unshare refused", EPERM);
        std::string proc = "/proc/" + std::to_string(child);
        files::write_file(proc + "/uid_map", std::to_string(from_uid) + " " + std::to_string(to_uid) + " 1\n");
        files::write_file(proc + "/gid_map", std::to_string(from_gid) + " " + std::to_string(to_gid) + " 1\n");
        UniqueFd userns(open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC));
        if (!userns)
            throw_errno("opening the tool's user namespace");
        reap();
        return userns;
    } catch (...) {
        reap();
        throw;
    }
}

} // namespace

ToolUser tool_user(uid_t caller_uid, gid_t caller_gid)
{
    ToolUser user;
    user.uid = nobody_uid;
    user.gid = nobody_gid;
    user.idmap = mapping_namespace(caller_uid, caller_gid, user.uid, user.gid);
    return user;
}

} // namespace cerberus::broker
