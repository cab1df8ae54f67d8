// SPDX-License-Identifier: Apache-2.0
// The parent/child channel: one message per send, errors from the child become
// the parent's, an fd across fork.
#include "base/error.hpp"
#include "base/files.hpp"
#include "base/unix_socket.hpp"
#include "process/sync_channel.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <stdexcept>

using namespace cerberus;

TEST_CASE("sync channel: messages keep their type, value and text, one per send")
{
    auto [parent, child] = SyncChannel::pair();
    child.send(SyncMessage::run_hooks);
    parent.send(SyncMessage::hooks_done, 7, R"({"status":"created"})");
    child.send(SyncMessage::child_ready, 0, "x");
    CHECK(parent.expect(SyncMessage::run_hooks).text.empty());
    SyncPacket hooks_done = child.expect(SyncMessage::hooks_done);
    CHECK(hooks_done.value == 7);
    CHECK(hooks_done.text == R"({"status":"created"})");
    CHECK(parent.receive().text == "x");
}

TEST_CASE("sync channel: the child's error is thrown in the parent, with its errno")
{
    auto [parent, child] = SyncChannel::pair();
    child.send(SyncMessage::child_error, EACCES, "exec /bin/x: Permission denied");
    CHECK_THROWS_WITH_AS(parent.expect(SyncMessage::child_ready), "exec /bin/x: Permission denied", Error);
    child.send(SyncMessage::child_error, ENOENT, "gone");
    try {
        parent.receive_fd();
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(e.errnum() == ENOENT);
    }
}

TEST_CASE("sync channel: an unexpected message and a peer gone are errors")
{
    auto [parent, child] = SyncChannel::pair();
    child.send(SyncMessage::child_ready);
    try {
        parent.expect(SyncMessage::run_hooks);
        FAIL("no error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "sync channel: unexpected message 4");
        CHECK(e.errnum() == EPROTO);
    }
    child.send(SyncMessage::child_ready);
    CHECK_THROWS_WITH_AS(parent.receive_fd(), "sync channel: expected a file descriptor", Error);
    child.close();
    CHECK_THROWS_WITH_AS(parent.receive(), "container init exited before it was set up", Error);
}

TEST_CASE("sync channel: across fork, an fd sent by the child arrives in the parent")
{
    auto [parent, child] = SyncChannel::pair();
    TempDir dir;
    std::string file = dir.path + "/passed";
    std::ofstream(file) << "through SCM_RIGHTS";
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        parent.close();
        int status = 1;
        try {
            child.expect(SyncMessage::parent_ready);
            UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
            unix_socket::send_with_fd(child.fd(), "seccomp", fd.get());
            child.send(SyncMessage::child_ready);
            status = 0;
        } catch (...) {
        }
        ::_exit(status);
    }
    child.close();
    parent.send(SyncMessage::parent_ready);
    UniqueFd received = parent.receive_fd();
    parent.expect(SyncMessage::child_ready);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    REQUIRE(received);
    CHECK((::fcntl(received.get(), F_GETFD) & FD_CLOEXEC) != 0);
    char text[32] = {};
    CHECK(::pread(received.get(), text, sizeof text - 1, 0) == 18);
    CHECK(std::string(text) == "through SCM_RIGHTS");
}

namespace {

// Forks a child that runs set_up through run_child(stage, ...), its stderr in a pipe; returns what the
// parent's expect() threw ("" if nothing), the child's exit status and what it wrote to stderr.
struct ChildOutcome {
    std::string error;
    int errnum = 0;
    int exit_status = -1;
    std::string stderr_text;
};

ChildOutcome run_in_child(const std::string& stage, bool close_channel, const std::function<void()>& set_up)
{
    auto [parent, child] = SyncChannel::pair();
    int err_pipe[2];
    REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
    UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        parent.close();
        ::dup2(err_write.get(), STDERR_FILENO);
        if (close_channel)
            child.close();
        run_child(stage, child, set_up);
    }
    child.close();
    err_write.reset();
    ChildOutcome outcome;
    if (!close_channel) {
        try {
            parent.expect(SyncMessage::child_ready);
        } catch (const Error& e) {
            outcome.error = e.what();
            outcome.errnum = e.errnum();
        }
    }
    char buf[256];
    ssize_t n;
    while ((n = ::read(err_read.get(), buf, sizeof buf)) > 0)
        outcome.stderr_text.append(buf, n);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    outcome.exit_status = WEXITSTATUS(status);
    return outcome;
}

} // namespace

TEST_CASE("run_child: the error that stops a child reaches the parent with its errno, under the stage's name")
{
    // The child names itself for ps, and its error carries that name back.
    ChildOutcome named = run_in_child("exec", false, [] {
        std::string comm = files::read_file("/proc/self/comm");
        throw Error("setns as " + comm.substr(0, comm.find('\n')), EPERM);
    });
    CHECK(named.error == "setns as cerberus:exec");
    CHECK(named.errnum == EPERM);
    CHECK(named.exit_status == 1);
    CHECK(named.stderr_text.empty());

    ChildOutcome other = run_in_child("init", false, [] { throw std::runtime_error("not a cerberus::Error"); });
    CHECK(other.error == "not a cerberus::Error");
    CHECK(other.errnum == EIO);
    CHECK(other.exit_status == 1);

    // Control: a child whose set-up goes on reports what it was asked to.
    ChildOutcome ready = run_in_child("init", false, [] {});
    CHECK(ready.error == "container init exited before it was set up");
    CHECK(ready.exit_status == 1);
}

TEST_CASE("run_child: once the channel is closed, the error goes to stderr")
{
    ChildOutcome closed = run_in_child("init", true, [] { throw Error("exec /bin/agent: Permission denied", EACCES); });
    CHECK(closed.stderr_text == "cerberus init: exec /bin/agent: Permission denied\n");
    CHECK(closed.exit_status == 1);
    ChildOutcome other = run_in_child("exec", true, [] { throw std::runtime_error("bad_alloc"); });
    CHECK(other.stderr_text == "cerberus exec: bad_alloc\n");
}
