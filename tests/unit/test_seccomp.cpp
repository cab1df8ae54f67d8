// SPDX-License-Identifier: Apache-2.0
// Filters are compiled here and installed in forked children (seccomp_child.hpp).
#include "base/error.hpp"
#include "base/fd.hpp"
#include "seccomp/seccomp.hpp"
#include "seccomp_child.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <nlohmann/json.hpp>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

using namespace cerberus;
using namespace cerberus::test;

namespace {

spec::Seccomp allow_by_default(std::vector<spec::SeccompSyscall> syscalls)
{
    spec::Seccomp config;
    config.default_action = "SCMP_ACT_ALLOW";
    config.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
    config.syscalls = std::move(syscalls);
    return config;
}

int socket_fails_with(int domain, int type, int expected)
{
    int fd = socket(domain, type, 0);
    if (fd >= 0)
        close(fd);
    return fails_with(fd, expected);
}

std::string compile_error(const spec::Seccomp& config)
{
    try {
        seccomp::compile(config);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

void send_fd(int sock, int fd)
{
    char byte = 'x';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    check(sendmsg(sock, &msg, 0), "sendmsg");
}

// Receives up to 64 KiB of payload and the one fd attached to it.
UniqueFd receive_fd(int sock, std::string* payload = nullptr)
{
    std::string buffer(65536, '\0');
    iovec iov{buffer.data(), buffer.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    long n = check(recvmsg(sock, &msg, MSG_CMSG_CLOEXEC), "recvmsg");
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    REQUIRE(cmsg != nullptr);
    REQUIRE(cmsg->cmsg_type == SCM_RIGHTS);
    int fd = -1;
    std::memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
    if (payload)
        *payload = buffer.substr(0, static_cast<size_t>(n));
    return UniqueFd(fd);
}

} // namespace

TEST_CASE("seccomp: ERRNO with errnoRet denies one syscall and allows the rest")
{
    auto filter = seccomp::compile(allow_by_default({rule({"mkdir", "mkdirat"}, "SCMP_ACT_ERRNO", 38)}));
    CHECK_FALSE(filter.has_listener());
    CHECK(filter.program.size() > 0);

    int status = run_filtered(filter, [] {
        if (int r = fails_with(syscall(SYS_mkdir, "/tmp/cerberus-seccomp-test", 0700), 38))
            return 10 + r;
        if (int r = fails_with(syscall(SYS_mkdirat, AT_FDCWD, "/tmp/cerberus-seccomp-test", 0700), 38))
            return 20 + r;
        return getpid() > 0 && syscall(SYS_getppid) > 0 ? 0 : 30;
    });
    CHECK(exit_code(status) == 0);
}

TEST_CASE("seccomp: ERRNO without errnoRet returns EPERM, and defaultErrnoRet applies to the default")
{
    spec::Seccomp config;
    config.default_action = "SCMP_ACT_ERRNO";
    config.default_errno_ret = ENOSYS;
    for (const char* name : {"exit_group", "exit", "getpid", "rt_sigreturn", "write"})
        config.syscalls.push_back(rule({name}, "SCMP_ACT_ALLOW"));
    config.syscalls.push_back(rule({"getppid"}, "SCMP_ACT_ERRNO"));

    int status = run_filtered(seccomp::compile(config), [] {
        if (int r = fails_with(syscall(SYS_getppid), EPERM))
            return 10 + r;
        if (int r = fails_with(syscall(SYS_getuid), ENOSYS))
            return 20 + r;
        return syscall(SYS_getpid) > 0 ? 0 : 30;
    });
    CHECK(exit_code(status) == 0);
}

TEST_CASE("seccomp: argument filters, including a repeated index and MASKED_EQ")
{
    // Two comparisons of argument 0 in one rule: runc adds them as two rules, so either matches.
    auto socket_domains = rule({"socket"}, "SCMP_ACT_ERRNO", EAFNOSUPPORT,
                               {{0, AF_INET6, 0, "SCMP_CMP_EQ"}, {0, AF_PACKET, 0, "SCMP_CMP_EQ"}});
    // value is the mask, valueTwo the datum.
    auto nonblocking_socketpair = rule({"socketpair"}, "SCMP_ACT_ERRNO", EINVAL,
                                       {{1, SOCK_NONBLOCK, SOCK_NONBLOCK, "SCMP_CMP_MASKED_EQ"}});
    auto filter = seccomp::compile(allow_by_default({socket_domains, nonblocking_socketpair}));

    int status = run_filtered(filter, [] {
        if (socket_fails_with(AF_INET6, SOCK_STREAM, EAFNOSUPPORT) != 0)
            return 10;
        if (socket_fails_with(AF_PACKET, SOCK_RAW, EAFNOSUPPORT) != 0)
            return 20;
        if (socket_fails_with(AF_INET, SOCK_STREAM, EAFNOSUPPORT) != 1)
            return 30;
        int pair[2];
        if (fails_with(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair), EINVAL) != 0)
            return 40;
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0)
            return 50;
        return 0;
    });
    CHECK(exit_code(status) == 0);
}

TEST_CASE("seccomp: KILL_PROCESS kills the process with SIGSYS")
{
    auto filter = seccomp::compile(allow_by_default({rule({"getppid"}, "SCMP_ACT_KILL_PROCESS")}));
    int status = run_filtered(filter, [] {
        syscall(SYS_getppid);
        return 0;
    });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGSYS);
}

TEST_CASE("seccomp: flags reach seccomp(2); unknown syscall names are skipped")
{
    auto config = allow_by_default({rule({"no_such_syscall", "socketcall", "getppid"}, "SCMP_ACT_ERRNO", 38)});
    config.flags = {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"};
    auto filter = seccomp::compile(config);
    CHECK(filter.flags == (SECCOMP_FILTER_FLAG_TSYNC | SECCOMP_FILTER_FLAG_LOG | SECCOMP_FILTER_FLAG_SPEC_ALLOW));
    CHECK(exit_code(run_filtered(filter, [] { return fails_with(syscall(SYS_getppid), 38); })) == 0);
}

TEST_CASE("seccomp: invalid fields are named in the error")
{
    auto config = allow_by_default({rule({"getppid"}, "SCMP_ACT_ERRNO"), rule({"mkdir"}, "SCMP_ACT_FOO")});
    CHECK(compile_error(config) == "linux.seccomp.syscalls[1].action: unknown action \"SCMP_ACT_FOO\"");

    config = allow_by_default({rule({"socket"}, "SCMP_ACT_ERRNO", {}, {{0, 1, 0, "SCMP_CMP_FOO"}})});
    CHECK(compile_error(config) == "linux.seccomp.syscalls[0].args[0].op: unknown operator \"SCMP_CMP_FOO\"");

    config = allow_by_default({rule({"socket"}, "SCMP_ACT_ERRNO", {}, {{6, 1, 0, "SCMP_CMP_EQ"}})});
    CHECK(compile_error(config) == "linux.seccomp.syscalls[0].args[0].index: index 6 is out of range (0-5)");

    config = allow_by_default({});
    config.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_FOO"};
    CHECK(compile_error(config) == "linux.seccomp.architectures[1]: unknown architecture \"SCMP_ARCH_FOO\"");

    config = allow_by_default({});
    config.flags = {"SECCOMP_FILTER_FLAG_FOO"};
    CHECK(compile_error(config) == "linux.seccomp.flags[0]: unknown flag \"SECCOMP_FILTER_FLAG_FOO\"");

    config = allow_by_default({});
    config.default_action = "SCMP_ACT_NOTIFY";
    CHECK(compile_error(config) == "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action");

    config = allow_by_default({rule({"getppid"}, "SCMP_ACT_ERRNO", 70000)});
    CHECK(compile_error(config) == "linux.seccomp.syscalls[0].action: errnoRet 70000 does not fit in 16 bits");
}

TEST_CASE("seccomp: every runtime-spec architecture and a large profile compile")
{
    auto config = allow_by_default({});
    config.default_action = "SCMP_ACT_ERRNO";
    // One filter holds one byte order: the native one.
    config.architectures = {"SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32", "SCMP_ARCH_ARM",
                            "SCMP_ARCH_AARCH64", "SCMP_ARCH_MIPSEL", "SCMP_ARCH_MIPSEL64",
                            "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC64LE", "SCMP_ARCH_RISCV64"};
    CHECK_NOTHROW(seccomp::compile(config));
    for (const char* big_endian : {"SCMP_ARCH_MIPS", "SCMP_ARCH_MIPS64", "SCMP_ARCH_MIPS64N32", "SCMP_ARCH_PPC",
                                   "SCMP_ARCH_PPC64", "SCMP_ARCH_S390", "SCMP_ARCH_S390X", "SCMP_ARCH_PARISC",
                                   "SCMP_ARCH_PARISC64"}) {
        config.architectures = {"SCMP_ARCH_X86_64", big_endian};
        CHECK(compile_error(config) == "linux.seccomp.architectures[1]: " + std::string(big_endian) +
                                           " has another byte order than this machine");
    }

    // A profile the size of Docker's default, for the native family only.
    config.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
    spec::SeccompSyscall allowed{{}, "SCMP_ACT_ALLOW", {}, {}};
    for (int nr = 0; nr < 450; ++nr)
        if (char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr)) {
            allowed.names.push_back(name);
            std::free(name);
        }
    config.syscalls = {allowed};
    auto filter = seccomp::compile(config);
    CHECK(filter.program.size() > allowed.names.size());
    CHECK(exit_code(run_filtered(filter, [] { return syscall(SYS_getppid) > 0 ? 0 : 1; })) == 0);
}

TEST_CASE("seccomp: NOTIFY hands a listener to the agent at listenerPath, which answers the syscall")
{
    auto dir = std::filesystem::temp_directory_path() / ("cerberus-seccomp-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string agent_path = (dir / "agent.sock").string();

    auto config = allow_by_default({rule({"getppid"}, "SCMP_ACT_NOTIFY")});
    CHECK(compile_error(config) == "linux.seccomp.listenerPath: required by rules with SCMP_ACT_NOTIFY");
    config.listener_path = agent_path;
    auto filter = seccomp::compile(config);
    REQUIRE(filter.has_listener());
    UniqueFd agent(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, agent_path.c_str());
    REQUIRE(bind(agent.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    REQUIRE(listen(agent.get(), 1) == 0);

    // The child passes its listener to us as init passes it to the runtime.
    int pair[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    UniqueFd runtime_end(pair[0]), init_end(pair[1]);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int code = 90;
        try {
            if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0) {
                int listener = seccomp::install(filter);
                send_fd(init_end.get(), listener);
                close(listener);
                code = syscall(SYS_getppid) == 4242 ? 0 : 1;
            }
        } catch (...) {
            code = 91;
        }
        _exit(code);
    }
    init_end.reset();

    UniqueFd listener = receive_fd(runtime_end.get());
    nlohmann::json state = {{"ociVersion", "1.1.0"}, {"id", "ctr"},         {"status", "creating"},
                            {"pid", pid},            {"bundle", "/bundle"}, {"annotations", {{"k", "v"}}}};
    seccomp::send_listener(listener.get(), agent_path, state.dump(), "some metadata");
    listener.reset();

    UniqueFd connection(accept4(agent.get(), nullptr, nullptr, SOCK_CLOEXEC));
    REQUIRE(connection);
    std::string payload;
    UniqueFd agent_listener = receive_fd(connection.get(), &payload);
    auto message = nlohmann::json::parse(payload);
    CHECK(message["ociVersion"] == "1.1.0");
    CHECK(message["fds"] == nlohmann::json::array({"seccompFd"}));
    CHECK(message["pid"] == pid);
    CHECK(message["metadata"] == "some metadata");
    CHECK(message["state"] == state);

    seccomp_notif* request = nullptr;
    seccomp_notif_resp* response = nullptr;
    REQUIRE(seccomp_notify_alloc(&request, &response) == 0);
    REQUIRE(seccomp_notify_receive(agent_listener.get(), request) == 0);
    CHECK(request->pid == static_cast<uint32_t>(pid));
    CHECK(request->data.nr == SYS_getppid);
    response->id = request->id;
    response->val = 4242;
    response->error = 0;
    response->flags = 0;
    CHECK(seccomp_notify_respond(agent_listener.get(), response) == 0);
    seccomp_notify_free(request, response);

    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(exit_code(status) == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("seccomp: send_listener names the socket it could not reach")
{
    std::string error;
    try {
        seccomp::send_listener(0, "/nonexistent/agent.sock", R"({"ociVersion":"1.1.0","pid":1})", "");
    } catch (const Error& e) {
        error = e.what();
    }
    CHECK(error == "failed to connect with seccomp agent /nonexistent/agent.sock: connect: no such file or directory");
}

TEST_CASE("seccomp: compile_cached reuses a stored program and ignores a damaged one")
{
    auto dir = std::filesystem::temp_directory_path() / ("cerberus-seccomp-cache-" + std::to_string(getpid()));
    auto config = allow_by_default({rule({"mkdir"}, "SCMP_ACT_ERRNO", 38)});
    config.flags = {"SECCOMP_FILTER_FLAG_LOG"};
    auto expected = seccomp::compile(config);
    auto same = [&](const seccomp::CompiledSeccomp& compiled) {
        return compiled.flags == expected.flags && compiled.program.size() == expected.program.size() &&
               std::memcmp(compiled.program.data(), expected.program.data(),
                           expected.program.size() * sizeof(sock_filter)) == 0;
    };

    CHECK(same(seccomp::compile_cached(config, dir.string())));
    std::vector<std::filesystem::path> entries(std::filesystem::directory_iterator(dir), {});
    REQUIRE(entries.size() == 1);
    CHECK(same(seccomp::compile_cached(config, dir.string())));

    // Another profile gets its own entry.
    auto other = config;
    other.syscalls[0].errno_ret = 39;
    CHECK_FALSE(same(seccomp::compile_cached(other, dir.string())));
    CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 2);

    std::filesystem::resize_file(entries[0], 10);
    CHECK(same(seccomp::compile_cached(config, dir.string())));
    CHECK(same(seccomp::compile_cached(config, dir.string())));

    // Errors are still reported, and nothing is stored for them.
    auto bad = config;
    bad.syscalls[0].action = "SCMP_ACT_FOO";
    CHECK_THROWS_AS(seccomp::compile_cached(bad, dir.string()), Error);
    CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 2);
    std::filesystem::remove_all(dir);
}
