// SPDX-License-Identifier: Apache-2.0
// The ENOSYS stub (seccomp_enosys.hpp): filters installed in forked children
// (seccomp_child.hpp), and programs compared with libseccomp's own.
#include "base/error.hpp"
#include "base/fd.hpp"
#include "seccomp/seccomp.hpp"
#include "seccomp_child.hpp"

#include <doctest/doctest.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

using namespace cerberus;
using namespace cerberus::test;

namespace {

constexpr long kUnknownNr = 1000;      // beyond every table
constexpr long kX32Bit = 0x40000000;   // __X32_SYSCALL_BIT
constexpr long kX32RtSigreturn = 513;  // x32's own numbers start at 512

// getrandom is the largest number named on x86-64 (318) and on x86 (355); on
// x32 rt_sigreturn is (513). getrandom is denied by the default action, as
// a call an old profile refuses on purpose.
spec::Seccomp deny_by_default(std::vector<std::string> architectures)
{
    spec::Seccomp config;
    config.default_action = "SCMP_ACT_ERRNO";
    config.architectures = std::move(architectures);
    config.syscalls = {rule({"exit_group", "exit", "rt_sigreturn", "write", "getpid"}, "SCMP_ACT_ALLOW"),
                       rule({"getrandom"}, "SCMP_ACT_ERRNO")};
    return config;
}

// libseccomp's program for the native architecture, with getppid refused by
// EACCES or no rule, to compare compile()'s with.
std::vector<sock_filter> libseccomp_program(uint32_t default_action, bool refuse_getppid = true)
{
    scmp_filter_ctx ctx = seccomp_init(default_action);
    REQUIRE(ctx != nullptr);
    if (refuse_getppid)
        REQUIRE(seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(getppid), 0) == 0);
    UniqueFd memfd(static_cast<int>(check(memfd_create("unit-seccomp", MFD_CLOEXEC), "memfd_create")));
    REQUIRE(seccomp_export_bpf(ctx, memfd.get()) == 0);
    seccomp_release(ctx);
    struct stat st {};
    REQUIRE(fstat(memfd.get(), &st) == 0);
    std::vector<sock_filter> program(st.st_size / sizeof(sock_filter));
    REQUIRE(pread(memfd.get(), program.data(), st.st_size, 0) == st.st_size);
    return program;
}

std::vector<sock_filter> compiled_program(const std::string& default_action, std::optional<uint32_t> errno_ret = {})
{
    spec::Seccomp config;
    config.default_action = default_action;
    config.default_errno_ret = errno_ret;
    config.syscalls = {rule({"getppid"}, "SCMP_ACT_ERRNO", EACCES)};
    return seccomp::compile(config).program;
}

bool same(const std::vector<sock_filter>& a, const std::vector<sock_filter>& b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const sock_filter& x, const sock_filter& y) {
        return x.code == y.code && x.jt == y.jt && x.jf == y.jf && x.k == y.k;
    });
}

} // namespace

TEST_CASE("seccomp ENOSYS: above the profile's largest call ENOSYS, up to it the profile's actions")
{
    auto filter = seccomp::compile(deny_by_default({"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"}));
    int status = run_filtered(filter, [] {
        if (int r = fails_with(syscall(kUnknownNr, 0, 0, 0), ENOSYS))
            return 10 + r;
        if (int r = fails_with(syscall(SYS_getrandom + 1, 0, 0, 0), ENOSYS))
            return 20 + r;
        // Controls: the largest named call, refused; an unnamed one below it, the default.
        char byte = 0;
        if (int r = fails_with(syscall(SYS_getrandom, &byte, 1, 0), EPERM))
            return 30 + r;
        if (int r = fails_with(syscall(SYS_getuid), EPERM))
            return 40 + r;
        return syscall(SYS_getpid) > 0 ? 0 : 50;
    });
    CHECK(exit_code(status) == 0);
}

#if defined(__x86_64__)
TEST_CASE("seccomp ENOSYS: x32 calls are held to x32's largest call, and left to libseccomp without x32")
{
    auto with_x32 = seccomp::compile(deny_by_default({"SCMP_ARCH_X86_64", "SCMP_ARCH_X32"}));
    int status = run_filtered(with_x32, [] {
        if (int r = fails_with(syscall(kX32Bit | kUnknownNr), ENOSYS))
            return 10 + r;
        if (int r = fails_with(syscall(kX32Bit | (kX32RtSigreturn + 1)), ENOSYS))
            return 20 + r;
        // Above x86-64's largest (getrandom, 318) but not x32's: the default.
        if (int r = fails_with(syscall(kX32Bit | 400), EPERM))
            return 30 + r;
        // Control: without the bit, 400 is above x86-64's largest.
        if (int r = fails_with(syscall(400), ENOSYS))
            return 40 + r;
        return 0;
    });
    CHECK(exit_code(status) == 0);

    // libseccomp's program answers a foreign ABI with its bad-architecture action (kill).
    auto without_x32 = seccomp::compile(deny_by_default({"SCMP_ARCH_X86_64"}));
    status = run_filtered(without_x32, [] { return fails_with(syscall(kX32Bit | kUnknownNr), ENOSYS) == 0 ? 1 : 0; });
    REQUIRE(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGSYS);
    CHECK(exit_code(run_filtered(without_x32, [] { return fails_with(syscall(kUnknownNr), ENOSYS); })) == 0);
}
#endif

TEST_CASE("seccomp ENOSYS: no stub when the default lets calls through or already says ENOSYS")
{
    CHECK(same(compiled_program("SCMP_ACT_ALLOW"), libseccomp_program(SCMP_ACT_ALLOW)));
    CHECK(same(compiled_program("SCMP_ACT_LOG"), libseccomp_program(SCMP_ACT_LOG)));
    CHECK(same(compiled_program("SCMP_ACT_TRACE"), libseccomp_program(SCMP_ACT_TRACE(EPERM))));
    CHECK(same(compiled_program("SCMP_ACT_ERRNO", ENOSYS), libseccomp_program(SCMP_ACT_ERRNO(ENOSYS))));

    // Control: a denying default gets the stub, and libseccomp's program follows it unchanged.
    auto patched = compiled_program("SCMP_ACT_ERRNO");
    auto plain = libseccomp_program(SCMP_ACT_ERRNO(EPERM));
    REQUIRE(patched.size() > plain.size());
    CHECK(same(std::vector<sock_filter>(patched.end() - plain.size(), patched.end()), plain));

    // Nor when no name of the profile resolves: there is no largest call.
    spec::Seccomp unknown_only;
    unknown_only.default_action = "SCMP_ACT_ERRNO";
    unknown_only.syscalls = {rule({"no_such_syscall"}, "SCMP_ACT_ALLOW")};
    CHECK(same(seccomp::compile(unknown_only).program, libseccomp_program(SCMP_ACT_ERRNO(EPERM), false)));
}
