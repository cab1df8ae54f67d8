// SPDX-License-Identifier: Apache-2.0
// The landlock backend's seccomp filters: what Landlock has no right for
// (sockets by family, rerouting options, xattrs, io_uring, memfds), what keeps
// the agent off other processes and the host's keyrings, and, in audit mode,
// the calls held for the audit collector to judge and let through.
#include "policy/backend_landlock.hpp"

#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>
#include <vector>

namespace cerberus::policy {
namespace {

// Families a socket may have under allowed_hosts: those whose peers the
// socket programs see, and unix, which stays on the host. Netlink is refused,
// as the BPF LSM refuses it: its raw and datagram sockets are one and the same.
constexpr uint64_t allowed_families[] = {1 /* AF_UNIX */, 2 /* AF_INET */, 10 /* AF_INET6 */};
constexpr uint64_t highest_family_checked = 16;

// Socket options that send packets elsewhere than to the address the socket
// programs judged (bpf/policy_net.bpf.h, option_reroutes): {level, optname}.
// Their cmsg forms are dropped by the egress program.
constexpr std::pair<uint64_t, uint64_t> rerouting_options[] = {
    {IPPROTO_IP, IP_OPTIONS},    {IPPROTO_IP, IP_RETOPTS},           {IPPROTO_IPV6, IPV6_RTHDR},
    {IPPROTO_IPV6, IPV6_2292RTHDR}, {IPPROTO_IPV6, IPV6_2292PKTOPTIONS},
};

spec::SeccompSyscall refuse(std::vector<std::string> names, uint32_t err = EPERM, std::vector<spec::SeccompArg> args = {})
{
    return {std::move(names), "SCMP_ACT_ERRNO", err, std::move(args)};
}

// Audit mode: the call is held for the collector, judged and let through.
spec::SeccompSyscall hold(std::vector<std::string> names, std::vector<spec::SeccompArg> args = {})
{
    return {std::move(names), "SCMP_ACT_NOTIFY", 0, std::move(args)};
}

spec::SeccompArg masked(unsigned index, uint64_t bits)
{
    return {index, bits, bits, "SCMP_CMP_MASKED_EQ"};
}

// An int argument equal to value. The kernel reads only an int's lower 32
// bits, so the comparison ignores the upper ones: a plain 64-bit comparison
// misses a value passed with garbage above it.
spec::SeccompArg int_equals(unsigned index, uint64_t value)
{
    return {index, 0xffffffff, value, "SCMP_CMP_MASKED_EQ"};
}

// socketcall(2), i386's multiplexer of the socket calls, passes their
// arguments in memory, which seccomp cannot read: a call whose arguments a
// rule judges is refused whole through it (the direct i386 calls, from Linux
// 4.3, meet the same rules as x86-64's).
constexpr uint64_t socketcall_socket = 1;
constexpr uint64_t socketcall_setsockopt = 14;

constexpr uint64_t userfaultfd_ioc_new = 0xaa00; // _IO(0xAA, 0x00): /dev/userfaultfd's only request
constexpr uint64_t ioprio_who_process = 1;

// Refused in every mode, audit mode too: escalation, which no policy allows,
// and what keeps the agent inside its container (keyrings, userfaultfd, other
// processes named by number).
void refuse_always(std::vector<spec::SeccompSyscall>& rules, bool shared_pids)
{
    rules.push_back(refuse({"bpf", "perf_event_open", "init_module", "finit_module", "delete_module", "kexec_load",
                            "kexec_file_load"}));
    rules.push_back(refuse({"unshare", "clone"}, EPERM, {masked(0, CLONE_NEWUSER)}));
    // setns with no type joins whatever namespace the fd is, a user namespace too.
    rules.push_back(refuse({"setns"}, EPERM, {int_equals(1, CLONE_NEWUSER)}));
    rules.push_back(refuse({"setns"}, EPERM, {int_equals(1, 0)}));
    rules.push_back(refuse({"clone3"}, ENOSYS)); // its flags are out of seccomp's sight: libc falls back to clone
    // Keyrings are not namespaced: without a user namespace the host root's user keyring is the agent's too.
    // userfaultfd holds the kernel on a page fault, for as long as the agent likes: a race primitive.
    rules.push_back(refuse({"keyctl", "add_key", "request_key", "userfaultfd"}));
    rules.push_back(refuse({"ioctl"}, EPERM, {int_equals(1, userfaultfd_ioc_new)})); // through /dev/userfaultfd
    if (shared_pids) {
        // Calls that act on another process named by number, which seccomp cannot tell the container's from
        // others': only the caller itself (0) is left them. Signals and ptrace are the domain's.
        for (const char* call : {"prlimit64", "sched_setaffinity", "sched_setparam", "sched_setscheduler",
                                 "sched_setattr", "migrate_pages", "move_pages"})
            rules.push_back(refuse({call}, EPERM, {{0, 0, 0, "SCMP_CMP_NE"}}));
        rules.push_back(refuse({"setpriority"}, EPERM, {{0, PRIO_PROCESS, 0, "SCMP_CMP_NE"}})); // a group, a user
        rules.push_back(refuse({"setpriority"}, EPERM, {{1, 0, 0, "SCMP_CMP_NE"}}));
        rules.push_back(refuse({"ioprio_set"}, EPERM, {{0, ioprio_who_process, 0, "SCMP_CMP_NE"}}));
        rules.push_back(refuse({"ioprio_set"}, EPERM, {{1, 0, 0, "SCMP_CMP_NE"}}));
    }
}

} // namespace

spec::Seccomp landlock_seccomp(const Policy& policy, bool memfd_sysctl, bool shared_pids)
{
    spec::Seccomp filter;
    filter.default_action = "SCMP_ACT_ALLOW";
#if defined(__x86_64__)
    filter.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
#endif
    auto& rules = filter.syscalls;
    refuse_always(rules, shared_pids);
    if (policy.allowed_hosts && policy.mode == Mode::enforce) {
        for (uint64_t family = 0; family <= highest_family_checked; ++family)
            if (std::find(std::begin(allowed_families), std::end(allowed_families), family) == std::end(allowed_families))
                rules.push_back(refuse({"socket"}, EPERM, {int_equals(0, family)}));
        // Upper bits set make the number larger: refused too, whatever the lower ones name.
        rules.push_back(refuse({"socket"}, EPERM, {{0, highest_family_checked + 1, 0, "SCMP_CMP_GE"}}));
        rules.push_back(refuse({"io_uring_setup"})); // its socket and connect operations pass no seccomp check
        for (const auto& [level, optname] : rerouting_options)
            rules.push_back(refuse({"setsockopt"}, EPERM, {int_equals(1, level), int_equals(2, optname)}));
        rules.push_back(refuse({"socketcall"}, EPERM, {int_equals(0, socketcall_socket)}));
        rules.push_back(refuse({"socketcall"}, EPERM, {int_equals(0, socketcall_setsockopt)}));
    }
    // Landlock has no right for xattrs (POSIX ACLs are xattrs): under path rules every set and removal is
    // refused, allowed paths included, and io_uring, whose xattr operations pass no seccomp check.
    if ((policy.restricts_paths() || !policy.denied_paths.empty()) && policy.mode == Mode::enforce)
        rules.push_back(refuse({"setxattr", "lsetxattr", "fsetxattr", "setxattrat", "removexattr", "lremovexattr",
                                "fremovexattr", "removexattrat", "io_uring_setup"}));
    if (policy.allowed_bins && !memfd_sysctl)
        rules.push_back(refuse({"memfd_create"})); // every memfd is executable on this kernel
    return filter;
}

spec::Seccomp landlock_audit_seccomp(const Policy& policy, bool shared_pids)
{
    spec::Seccomp filter;
    filter.default_action = "SCMP_ACT_ALLOW";
#if defined(__x86_64__)
    filter.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"}; // the collector judges x86-64 calls
#endif
    filter.listener_path = "(the audit collector)"; // the listener goes there over a socket, not by path
    auto& rules = filter.syscalls;
    refuse_always(rules, shared_pids);
    // Landlock refuses mounts in enforce mode; here there is no Landlock domain with file rules.
    rules.push_back(hold({"mount", "umount2", "pivot_root", "move_mount", "fsopen", "fsmount", "open_tree"}));
    if (policy.allowed_hosts) {
        for (uint64_t family = 0; family <= highest_family_checked; ++family)
            if (std::find(std::begin(allowed_families), std::end(allowed_families), family) == std::end(allowed_families))
                rules.push_back(hold({"socket"}, {{0, family, 0, "SCMP_CMP_EQ"}}));
        rules.push_back(hold({"socket"}, {{0, highest_family_checked + 1, 0, "SCMP_CMP_GE"}}));
        for (const auto& [level, optname] : rerouting_options)
            rules.push_back(hold({"setsockopt"}, {{1, level, 0, "SCMP_CMP_EQ"}, {2, optname, 0, "SCMP_CMP_EQ"}}));
    }
    bool path_rules = policy.restricts_paths() || !policy.denied_paths.empty();
    if (path_rules || policy.allowed_hosts)
        rules.push_back(hold({"io_uring_setup"}));
    if (path_rules || policy.allowed_bins)
        rules.push_back(hold({"open", "creat", "openat", "openat2", "execve", "execveat"}));
    if (path_rules)
        rules.push_back(hold({"mkdir", "mkdirat", "mknod", "mknodat", "rmdir", "unlink", "unlinkat", "rename",
                              "renameat", "renameat2", "link", "linkat", "symlink", "symlinkat", "truncate",
                              "ftruncate", "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown",
                              "fchownat", "utime", "utimes", "utimensat", "futimesat", "setxattr", "lsetxattr",
                              "fsetxattr", "setxattrat", "removexattr", "lremovexattr", "fremovexattr",
                              "removexattrat"}));
    if (policy.allowed_bins) {
        rules.push_back(hold({"mmap"}, {masked(2, PROT_EXEC)}));
        rules.push_back(hold({"memfd_create"}));
    }
    return filter;
}

} // namespace cerberus::policy
