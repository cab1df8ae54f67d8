// SPDX-License-Identifier: Apache-2.0
#include "policy/backend_landlock.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "kernel/audit_netlink.hpp"
#include "policy/bpf_objects.hpp"
#include "policy/landlock.hpp"
#include "policy/policy_containment.hpp"
#include "policy/socket_programs.hpp"

#include <netinet/in.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>

namespace cerberus::policy {
namespace {

constexpr const char* memfd_sysctl_file = "/proc/sys/vm/memfd_noexec";
// The policy's seccomp filter depends only on the policy's shape and the host
// (seccomp::compile_cached's key): compiled once per host, not per container.
constexpr const char* seccomp_cache_dir = "/run/cerberus-enforcement/landlock-seccomp";

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

bool own_pid_namespace(const spec::Spec& spec)
{
    const spec::Namespace* pid = spec.find_namespace("pid");
    return pid && pid->path.empty();
}

// vm.memfd_noexec is per pid namespace: it does the memfd part only in one of the container's own.
bool memfd_by_sysctl(const spec::Spec& spec)
{
    return own_pid_namespace(spec) && files::exists(memfd_sysctl_file);
}

std::vector<std::string> sorted(std::vector<std::string> paths)
{
    std::sort(paths.begin(), paths.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
    return paths;
}

bool under_any(const std::string& path, const std::optional<std::vector<std::string>>& prefixes)
{
    return prefixes && std::any_of(prefixes->begin(), prefixes->end(),
                                   [&](const std::string& prefix) { return path_within(path, prefix); });
}

// The longest entry of the list at or above path; "" for none.
std::string closest(const std::string& path, const std::optional<std::vector<std::string>>& entries)
{
    std::string best;
    for (const auto& entry : entries.value_or(std::vector<std::string>{}))
        if (path_within(path, entry) && entry.size() > best.size())
            best = entry;
    return best;
}

// The agent may rename or remove path: the most specific entry above it is writable (or no list governs paths).
bool renamable(const Policy& policy, const std::string& path)
{
    if (!policy.restricts_paths())
        return true;
    std::string allowed = closest(path, policy.allowed_paths);
    return !allowed.empty() && allowed.size() >= closest(path, policy.read_only_paths).size();
}

// The directories a read-only or hidden path keeps its place by: each one
// between it and the mount above it (the root, or a path mounted on itself)
// that the agent could rename or remove. Each becomes a mount point, which
// no rename, exchange or removal can move (EBUSY), and which a Landlock domain
// cannot unmount: renaming a parent away and a forged directory into its
// place would otherwise move the cover (or the read-only mount) off the name.
std::vector<std::string> pinned_parents(const Policy& policy, const std::vector<std::string>& kept,
                                        const std::vector<std::string>& mounted)
{
    std::vector<std::string> pinned;
    for (const auto& path : kept) {
        for (std::string dir = path.substr(0, path.rfind('/')); !dir.empty(); dir = dir.substr(0, dir.rfind('/'))) {
            if (std::find(mounted.begin(), mounted.end(), dir) != mounted.end())
                break;
            if (renamable(policy, dir) && std::find(pinned.begin(), pinned.end(), dir) == pinned.end())
                pinned.push_back(dir);
        }
    }
    return sorted(pinned);
}

// Why Landlock's file and exec denials cannot reach the trail on this host; "" when they can.
std::string files_unreported_why_now(int abi)
{
    if (abi < 7)
        return "denials are not reported: Landlock logs them only from ABI 7 (this kernel has " +
               std::to_string(abi) + ")";
    kernel::AuditStatus audit = kernel::audit_status();
    if (!audit.known)
        return "denials are not reported: Landlock logs them only to kernel audit, whose state could not be read (" +
               audit.why_unknown + ")";
    if (audit.enabled == 0)
        return "denials are not reported: Landlock logs them only to kernel audit, which is disabled on this host "
               "(auditctl -e 1, or audit=1 on the kernel command line, turns it on)";
    return "";
}

// The same, asked of the kernel once per process: the kernel answers AUDIT_GET
// from a thread it starts for the purpose, which can take milliseconds on a
// busy host, and a create consults the coverage table three times.
const std::string& files_unreported_why(int abi)
{
    static const std::string why = files_unreported_why_now(abi);
    return why;
}

// Once per process: reading the mount table is most of a probe, and a create probes each time it decides.
const std::string& cgroup2_location()
{
    static const std::string location = [] {
        try {
            return cgroups::Mounts::detect().unified;
        } catch (const Error&) {
            return std::string();
        }
    }();
    return location;
}

// A container sharing a pid namespace sees processes outside it: its domain
// keeps ptrace's reach and signals inside (landlock::confine_to_domain), and
// its seccomp filter the calls that act on another process by number. Throws,
// naming the field, where that cannot hold: signals before Landlock ABI 6, and
// a cgroupfs the agent may write to where a cgroup namespace is no delegation
// boundary (cgroup2 without nsdelegate): there the kernel lets a task inside
// pull a process of the shared namespace into its cgroup (under the
// container's policy and limits), and no Landlock or seccomp rule sees it.
void keep_off_other_processes(const spec::Spec& spec)
{
    int abi = landlock::abi_version();
    if (abi < landlock::signal_scope_abi)
        throw Error("linux.namespaces: the container shares a pid namespace, and the landlock backend keeps "
                        "signals off the processes outside it only from Landlock ABI " +
                        std::to_string(landlock::signal_scope_abi) + " (this kernel has " + std::to_string(abi) +
                        "); give it a pid namespace of its own",
                    EOPNOTSUPP);
    std::optional<size_t> writable = writable_cgroup_mount(spec);
    if (!writable)
        return;
    bool delegates = false;
    try {
        delegates = cgroups::Mounts::detect().ns_delegate;
    } catch (const Error&) {
    }
    if (!delegates)
        throw Error("mounts[" + std::to_string(*writable) + "] (" + spec.mounts[*writable].destination +
                        "): the container shares a pid namespace and may write to its cgroups, and this host's "
                        "cgroup2 is not mounted with nsdelegate: a process outside the container could be moved "
                        "into its cgroup, which the landlock backend cannot refuse; mount it read-only",
                    EOPNOTSUPP);
}

class Landlock final : public Backend {
public:
    Enforcement kind() const override { return Enforcement::landlock; }

    Probe probe() const override
    {
        int abi = landlock::abi_version();
        if (abi < 1)
            return {false, "Landlock is not enabled in this kernel (\"landlock\" missing from lsm=)"};
        if (cgroup2_location().empty())
            return {false, "no cgroup v2 hierarchy is mounted, where the socket programs attach"};
        try {
            socket_programs::ensure_loaded();
        } catch (const Error& e) {
            return {false, e.what()};
        }
        return {true, "Landlock ABI " + std::to_string(abi) + ", cgroup socket programs loaded"};
    }

    std::vector<Coverage> coverage() const override
    {
        int abi = landlock::abi_version();
        const std::string why_unreported = files_unreported_why(abi);
        const bool files_reported = why_unreported.empty();
        // Rows Landlock enforces say, when its denials cannot be reported here, why.
        auto files_note = [&](std::string note) {
            return files_reported ? note : note.empty() ? why_unreported : note + "; " + why_unreported;
        };
        return {
            {RuleKind::allowed_hosts, Level::full, true, true,
             "cgroup connect4/6 and sendmsg4/6 programs; IPv4-mapped IPv6 is checked as IPv4; a cgroup egress "
             "program judges where each packet really goes (IP options, IPv6 routing headers, destinations of "
             "unconnected sockets too, the host's loopback device); the options that set routes refused by "
             "seccomp, unreported"},
            {RuleKind::raw_sockets, Level::full, false, true,
             "raw and ICMP inet sockets, and protocols other than TCP and UDP, refused and reported by a cgroup "
             "sock_create program; other families "
             "(packet, vsock...) and io_uring refused by seccomp, unreported; in audit mode those are let through"},
            {RuleKind::paths, Level::full, files_reported, false,
             files_note(files_reported ? "denials read from the kernel audit log; pid and comm where the kernel "
                                         "sends the event's SYSCALL record"
                                       : "")},
            {RuleKind::path_changes, Level::partial, files_reported, false,
             files_note(std::string(abi >= 3 ? "" : "truncate is not governed before Landlock ABI 3; ") +
                        "chmod, chown and times are refused only where the mounts are read-only "
                        "(read_only_paths, denied_paths, and the root when it is outside allowed_paths); xattrs "
                        "and ACLs are refused everywhere by seccomp, unreported")},
            {RuleKind::denied_paths, Level::partial, false, false,
             "hidden under an empty read-only file or directory (reads find it empty, writes fail with EROFS); a "
             "path missing at create is not hidden; refused at create when other hard links or mounts reach it"},
            {RuleKind::unix_sockets, Level::partial, false, false,
             "a socket cannot be made outside allowed_paths, but connecting to an existing one by path is not checked"},
            {RuleKind::allowed_bins, Level::full, files_reported, false,
             files_note("the execute right on the listed files and their ELF interpreters; executable memfds "
                        "refused (vm.memfd_noexec=2, or seccomp without a pid namespace of the container's own)")},
            {RuleKind::exec_mappings, Level::partial, false, false,
             "writable paths are mounted noexec; the dynamic loader, which listed programs need, can still map "
             "files under read_only_paths when run directly"},
            {RuleKind::forbidden_caps, Level::full, false, false,
             "dropped from every set with no_new_privs; no hook sees a use, so none is reported"},
            {RuleKind::escalation, Level::full, false, true,
             "seccomp (bpf, perf_event_open, modules, kexec, new user namespaces) and Landlock (mounts); denied "
             "in audit mode too, unreported; seccomp's rules hold on the i386 ABI too"},
            {RuleKind::cgroup_exit, Level::full, false, true,
             "a cgroup namespace of its own roots every cgroup view at the container's cgroup, where the socket "
             "programs stay attached; binds of the host's cgroups refused at create, and so is a writable cgroupfs "
             "in a shared pid namespace where cgroup2 lacks nsdelegate; nothing sees an attempt, so none is "
             "reported"},
            {RuleKind::other_processes, abi >= landlock::signal_scope_abi ? Level::full : Level::partial, false, true,
             std::string("keyrings and userfaultfd refused by seccomp, unreported; in a shared pid namespace the "
                         "Landlock domain keeps ptrace, /proc/<pid>/mem, process_vm_writev and pidfd_getfd, and "
                         "signals (ABI 6), off processes outside it (reported through kernel audit from ABI 7), and "
                         "seccomp refuses prlimit, setpriority, ioprio and scheduling calls on any other process, "
                         "the container's own too") +
                 (abi >= landlock::signal_scope_abi
                      ? ""
                      : "; this kernel's Landlock (ABI " + std::to_string(abi) +
                            ") cannot keep signals in: a shared pid namespace is refused at create")},
        };
    }

    void adapt_spec(const Policy& policy, spec::Spec& spec, const std::string&) const override
    {
        if (shares_pid_namespace(spec))
            keep_off_other_processes(spec);
        if (policy.allowed_bins && spec.linux && memfd_by_sysctl(spec))
            spec.linux->sysctl["vm.memfd_noexec"] = "2"; // the container's pid namespace only
        bool root_writable = policy.allowed_paths && std::find(policy.allowed_paths->begin(),
                                                               policy.allowed_paths->end(),
                                                               "/") != policy.allowed_paths->end();
        if (policy.restricts_paths() && !root_writable)
            spec.root.readonly = true;
    }

    void install(const CompiledPolicy& compiled, const ContainerCgroup& cgroup,
                 const std::string& keys_file) const override
    {
        bpf::install_entries(compiled, keys_file, CERB_BACKEND_LANDLOCK);
        try {
            socket_programs::attach(cgroup.dir_fd, cgroup.id, socket_programs::Set::every);
        } catch (const Error&) {
            bpf::remove_entries(cgroup.id, keys_file);
            throw;
        }
    }

    void remove(const ContainerCgroup& cgroup, const std::string& keys_file) const override
    {
        if (cgroup.dir_fd >= 0)
            socket_programs::detach(cgroup.dir_fd, cgroup.pin_dir);
        bpf::remove_entries(cgroup.id, keys_file, cgroup.pin_dir);
    }

    uint64_t path_seed() const override { return 0; } // no path maps: Landlock binds rules to objects

    ProcessRestrictions restrictions(const Policy& policy, const spec::Spec& spec) const override
    {
        ProcessRestrictions restrictions;
        int abi = landlock::abi_version();
        auto plan = landlock::plan_ruleset(policy, abi);
        bool shared_pids = shares_pid_namespace(spec);
        if (shared_pids)
            landlock::confine_to_domain(plan, abi); // adapt_spec refused the container where this ABI cannot
        if (plan.wanted()) {
            restrictions.landlock_ruleset = landlock::create_ruleset(plan);
            restrictions.landlock_flags = landlock::restrict_flags(abi);
        }
        bool memfd_sysctl = memfd_by_sysctl(spec);
        restrictions.seccomp =
            seccomp::compile_cached(landlock_seccomp(policy, memfd_sysctl, shared_pids), seccomp_cache_dir);
        restrictions.path_mounts = landlock_path_mounts(policy, memfd_sysctl);
        return restrictions;
    }

    void fill_restrictions(const Policy& policy, ProcessRestrictions& restrictions, int root_fd) const override
    {
        if (!restrictions.landlock_ruleset)
            return;
        landlock::add_rules(restrictions.landlock_ruleset.get(),
                            landlock::plan_ruleset(policy, landlock::abi_version()), root_fd);
    }

    // Nothing binds the set-up task: it applies the ruleset and the filter
    // itself just before execve, and the socket programs judge sockets, which
    // it does not open.
    void exempt_until_exec(pid_t, const ContainerCgroup&) const override {}
};

} // namespace

spec::Seccomp landlock_seccomp(const Policy& policy, bool memfd_sysctl, bool shared_pids)
{
    spec::Seccomp filter;
    filter.default_action = "SCMP_ACT_ALLOW";
#if defined(__x86_64__)
    filter.architectures = {"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"};
#endif
    auto& rules = filter.syscalls;
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

std::vector<mounts::PathMount> landlock_path_mounts(const Policy& policy, bool memfd_sysctl)
{
    using Kind = mounts::PathMount::Kind;
    std::vector<mounts::PathMount> planned;
    bool bins = policy.allowed_bins.has_value();
    std::vector<std::string> mounted; // paths mounted on themselves
    std::vector<std::string> kept;    // read-only and hidden paths, whose place is kept
    for (const auto& path : sorted(policy.allowed_paths.value_or(std::vector<std::string>{})))
        if (path != "/") {
            planned.push_back({Kind::writable, path, bins});
            mounted.push_back(path);
        }
    std::vector<mounts::PathMount> read_only;
    for (const auto& path : sorted(policy.read_only_paths.value_or(std::vector<std::string>{})))
        if (path != "/") {
            read_only.push_back({Kind::read_only, path, false});
            mounted.push_back(path);
            kept.push_back(path);
        }
    if (bins && memfd_sysctl)
        read_only.push_back({Kind::read_only, "/proc/sys", false}); // vm.memfd_noexec stays 2
    bool everything_allowed = !policy.restricts_paths();
    std::vector<mounts::PathMount> denied;
    for (const auto& path : sorted(policy.denied_paths)) {
        bool reachable =
            everything_allowed || under_any(path, policy.allowed_paths) || under_any(path, policy.read_only_paths);
        denied.push_back({reachable ? Kind::hide : Kind::sole_name, path, false});
        if (reachable)
            kept.push_back(path);
    }
    for (const auto& dir : pinned_parents(policy, kept, mounted))
        planned.push_back({Kind::pinned, dir, false});
    planned.insert(planned.end(), read_only.begin(), read_only.end());
    planned.insert(planned.end(), denied.begin(), denied.end());
    return planned;
}

const Backend& landlock_backend()
{
    static const Landlock instance;
    return instance;
}

} // namespace cerberus::policy
