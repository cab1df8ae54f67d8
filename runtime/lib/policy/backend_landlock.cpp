// SPDX-License-Identifier: Apache-2.0
#include "policy/backend_landlock.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "kernel/audit_netlink.hpp"
#include "kernel/call_observer.hpp"
#include "policy/container_part.hpp"
#include "policy/landlock.hpp"
#include "policy/policy_containment.hpp"
#include "policy/socket_programs.hpp"
#include "rootfs/paths.hpp"

#include <sched.h>

#include <algorithm>

namespace cerberus::policy {
namespace {

constexpr const char* memfd_sysctl_file = "/proc/sys/vm/memfd_noexec";
// The policy's seccomp filter depends only on the policy's shape and the host
// (seccomp::compile_cached's key): compiled once per host, not per container.
constexpr const char* seccomp_cache_dir = "/run/cerberus-enforcement/landlock-seccomp";

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
                                   [&](const std::string& prefix) { return paths::within(path, prefix); });
}

// The longest entry of the list at or above path; "" for none.
std::string closest(const std::string& path, const std::optional<std::vector<std::string>>& entries)
{
    std::string best;
    for (const auto& entry : entries.value_or(std::vector<std::string>{}))
        if (paths::within(path, entry) && entry.size() > best.size())
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

// Why Landlock's own records of its denials do not reach the trail on this host; "" when they do.
std::string landlock_unlogged_why_now(int abi)
{
    if (abi < 7)
        return "Landlock logs its denials only from ABI 7 (this kernel has " + std::to_string(abi) + ")";
    kernel::AuditStatus audit = kernel::audit_status();
    if (!audit.known)
        return "Landlock logs its denials only to kernel audit, whose state could not be read (" + audit.why_unknown +
               ")";
    if (audit.enabled == 0)
        return "Landlock logs its denials only to kernel audit, which is disabled on this host (auditctl -e 1, or "
               "audit=1 on the kernel command line, turns it on)";
    return "";
}

// The same, asked of the kernel once per process: the kernel answers AUDIT_GET
// from a thread it starts for the purpose, which can take milliseconds on a
// busy host, and a create consults the coverage table three times.
const std::string& landlock_unlogged_why(int abi)
{
    static const std::string why = landlock_unlogged_why_now(abi);
    return why;
}

// How this host reports the landlock backend's refusals: the call observer
// (kernel/call_observer) sees every refused call whatever the audit state,
// and the collector pairs Landlock's own records, where the kernel audit log
// carries them, with its calls (one line a denial); without the observer,
// Landlock's records alone, while kernel audit is on. The audit state is
// asked of the kernel only where the observer is missing: the AUDIT_GET
// costs a create a kernel thread and a wait.
struct Reporting {
    int abi = 0;
    kernel::ObserverSupport observer;

    bool refusals() const { return observer.calls; }
    bool landlock_refusals() const { return observer.calls || landlock_unlogged_why(abi).empty(); }
    // For a row whose refusals come from Landlock (from_landlock) or from seccomp and the mounts.
    std::string note(bool from_landlock) const
    {
        if (observer.calls)
            return std::string("the call observer: failed calls judged against the policy at their return (sys_exit "
                               "tracepoint)") +
                   (from_landlock && abi >= 7 ? "; Landlock's records from the kernel audit log, while audit is on, "
                                                "paired with them (one line a denial) and alone for what the "
                                                "observer does not see"
                                              : "");
        const std::string& unlogged_why = landlock_unlogged_why(abi);
        if (from_landlock && unlogged_why.empty())
            return "Landlock's records, read from the kernel audit log, while kernel audit stays on (the kernel "
                   "refused the call observer: " + observer.why + ")";
        return "not reported: " + (from_landlock ? unlogged_why + "; " : std::string()) +
               "the kernel refused the call observer (" + observer.why + ")";
    }
};

Reporting reporting(int abi)
{
    return {.abi = abi, .observer = kernel::observer_support()};
}

std::string joined(const std::string& a, const std::string& b)
{
    return a.empty() ? b : b.empty() ? a : a + "; " + b;
}

// "" where no cgroup2 is mounted.
std::string cgroup2_location()
{
    try {
        return cgroups::Mounts::detect().unified;
    } catch (const Error&) {
        return std::string();
    }
}

// A container sharing a pid namespace sees processes outside it: its domain
// keeps ptrace's reach and signals inside (landlock::confine_to_domain), and
// its seccomp filter the calls that act on another process by number. Throws,
// naming the field, where that cannot hold: signals before Landlock ABI 6.
void keep_off_other_processes()
{
    int abi = landlock::abi_version();
    if (abi < landlock::signal_scope_abi)
        throw Error("linux.namespaces: the container shares a pid namespace, and the landlock backend keeps "
                        "signals off the processes outside it only from Landlock ABI " +
                        std::to_string(landlock::signal_scope_abi) + " (this kernel has " + std::to_string(abi) +
                        "); give it a pid namespace of its own",
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
        // Audit mode holds the calls each rule kind concerns for the audit collector (seccomp user
        // notification), which records those enforce mode would refuse and lets them through.
        int abi = landlock::abi_version();
        Reporting r = reporting(abi);
        bool caps_reported = r.observer.capabilities != kernel::CapabilityChecks::none;
        std::string caps_note = caps_reported
                                    ? "dropped from every set with no_new_privs; a use is reported by the call "
                                      "observer (" + std::string(r.observer.capabilities == kernel::CapabilityChecks::kprobe
                                                                      ? "a kprobe on cap_capable"
                                                                      : "the cap_capable tracepoint, paired with the "
                                                                        "call that failed") + ")"
                                    : "dropped from every set with no_new_privs; not reported: no kprobes and no "
                                      "cap_capable tracepoint (Linux 6.14) here, or the call observer was refused";
        return {
            {RuleKind::allowed_hosts, Level::full, true, true,
             "cgroup connect4/6 and sendmsg4/6 programs; IPv4-mapped IPv6 is checked as IPv4; a cgroup egress "
             "program judges where each packet really goes (IP options, IPv6 routing headers, destinations of "
             "unconnected sockets too, the host's loopback device); the options that set routes refused by "
             "seccomp, " + std::string(r.refusals() ? "reported by the call observer" : "unreported")},
            {RuleKind::raw_sockets, Level::full, r.refusals(), true,
             "raw and ICMP inet sockets, and protocols other than TCP and UDP, refused and reported by a cgroup "
             "sock_create program; other families (packet, vsock...) and io_uring refused by seccomp, " +
                 std::string(r.refusals() ? "reported by the call observer" : "unreported")},
            {RuleKind::paths, Level::full, r.landlock_refusals(), true, r.note(true)},
            {RuleKind::path_changes, Level::partial, r.landlock_refusals(), true,
             joined(std::string(abi >= 3 ? "" : "truncate is not governed before Landlock ABI 3; ") +
                        "chmod, chown and times are refused only where the mounts are read-only "
                        "(read_only_paths, denied_paths, and the root when it is outside allowed_paths); xattrs "
                        "and ACLs are refused everywhere by seccomp",
                    r.note(true))},
            {RuleKind::denied_paths, Level::partial, r.refusals(), true,
             joined("hidden under an empty read-only file or directory (reads find it empty, writes fail with "
                    "EROFS); a path missing at create is not hidden; refused at create when other hard links or "
                    "mounts reach it",
                    r.note(false))},
            {RuleKind::unix_sockets, Level::partial, r.landlock_refusals(), true,
             joined("a socket cannot be made outside allowed_paths, but connecting to an existing one by path is not "
                    "checked",
                    r.note(true))},
            {RuleKind::allowed_bins, Level::full, r.landlock_refusals(), true,
             joined("the execute right on the listed files and their ELF interpreters; executable memfds "
                    "refused (vm.memfd_noexec=2, or seccomp without a pid namespace of the container's own)",
                    r.note(true))},
            {RuleKind::exec_mappings, Level::partial, r.refusals(), true,
             joined("writable paths are mounted noexec; the dynamic loader, which listed programs need, can still "
                    "map files under read_only_paths when run directly",
                    r.note(false))},
            {RuleKind::forbidden_caps, Level::full, caps_reported, true,
             caps_note + "; audit mode drops them too, as every backend does"},
            {RuleKind::escalation, Level::full, r.refusals(), true,
             joined("seccomp (bpf, perf_event_open, modules, kexec, new user namespaces) and Landlock (mounts); "
                    "in audit mode those calls stay denied and mounts are recorded and let through; seccomp's rules "
                    "hold on the i386 ABI too",
                    r.note(false))},
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
            keep_off_other_processes();
        if (policy.mode == Mode::audit)
            return; // nothing is refused: no mount, no sysctl
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
        // Whether Landlock's own records of a denial reach the collector is seen per denial (the audit
        // state can change after create): nothing about it is decided here.
        // The socket programs let everything through for a policy without allowed_hosts: none is attached.
        std::optional<socket_programs::Set> programs;
        if (compiled.policy.flags & CERB_HAS_HOSTS)
            programs = (compiled.policy.flags & CERB_HAS_NAMES) ? socket_programs::Set::every
                                                                : socket_programs::Set::addresses;
        install_container_part(compiled, cgroup, keys_file, CERB_BACKEND_LANDLOCK, programs);
    }

    void remove(const ContainerCgroup& cgroup, const std::string& keys_file) const override
    {
        remove_container_part(cgroup, keys_file);
    }

    uint64_t path_seed() const override { return 0; } // no path maps: Landlock binds rules to objects

    ProcessRestrictions restrictions(const Policy& policy, const spec::Spec& spec) const override
    {
        ProcessRestrictions restrictions;
        int abi = landlock::abi_version();
        bool audit = policy.mode == Mode::audit;
        // Audit mode: a domain without file rules, made only to keep other processes out of reach.
        auto plan = audit ? landlock::RulesetPlan{} : landlock::plan_ruleset(policy, abi);
        bool shared_pids = shares_pid_namespace(spec);
        if (shared_pids)
            landlock::confine_to_domain(plan, abi); // adapt_spec refused the container where this ABI cannot
        if (plan.wanted()) {
            restrictions.landlock_ruleset = landlock::create_ruleset(plan);
            restrictions.landlock_flags = landlock::restrict_flags(abi);
        }
        if (audit) {
            restrictions.seccomp = seccomp::compile(landlock_audit_seccomp(policy, shared_pids));
            // Nothing is hidden, but a denied path with other names is refused at create, as in enforce mode.
            for (const auto& path : sorted(policy.denied_paths))
                restrictions.path_mounts.push_back({mounts::PathMount::Kind::sole_name, path, false});
            return restrictions;
        }
        bool memfd_sysctl = memfd_by_sysctl(spec);
        restrictions.seccomp =
            seccomp::compile_cached(landlock_seccomp(policy, memfd_sysctl, shared_pids), seccomp_cache_dir);
        restrictions.path_mounts = landlock_path_mounts(policy, memfd_sysctl);
        return restrictions;
    }

    void fill_restrictions(const Policy& policy, ProcessRestrictions& restrictions, int root_fd) const override
    {
        // Audit mode's domain handles no file access (restrictions: only the scopes that keep other
        // processes out of reach): a file rule in it is EINVAL.
        if (!restrictions.landlock_ruleset || policy.mode == Mode::audit)
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
