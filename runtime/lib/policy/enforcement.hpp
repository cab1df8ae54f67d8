// SPDX-License-Identifier: Apache-2.0
// Enforcement backends: the kernel mechanisms that carry out one compiled
// policy. Each backend says whether this host can run it (probe), which rule
// kinds it enforces, reports and can audit (coverage), installs and removes a
// container's part keyed by its cgroup, and hands the container's processes
// what they must apply to themselves before exec (a Landlock ruleset, a
// seccomp filter). A policy that needs what the chosen backend cannot do is
// refused at create, naming the rule and the backend; it is never weakened.
#pragma once

#include "base/fd.hpp"
#include "kernel/pinned_maps.hpp"
#include "oci/spec.hpp"
#include "policy/policy.hpp"
#include "policy/coverage_rows.hpp"
#include "policy/policy_compile.hpp"
#include "rootfs/path_mounts.hpp"
#include "seccomp/seccomp.hpp"

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::policy {

enum class Level { full, partial, none };

struct Coverage {
    RuleKind kind;
    Level enforced;   // in enforce mode
    bool reported;    // denials reach the trail
    bool audit_mode;  // mode "audit": allowed and reported instead
    std::string note; // what partial means, or why not
};

struct Probe {
    bool usable = false;
    std::string why; // what the host has or lacks, for `cerberus check` and errors
};

// What the container's processes do themselves: each one (the init, each
// `cerberus exec` process) applies the ruleset and the filter just before
// execve; the init makes the mounts after pivot_root. Plain kernel objects and
// data, so process/ needs nothing of policy/.
struct ProcessRestrictions {
    UniqueFd landlock_ruleset; // landlock_restrict_self with landlock_flags; empty: none
    uint32_t landlock_flags = 0;
    std::optional<seccomp::CompiledSeccomp> seccomp; // stacked on the spec's filter
    std::vector<mounts::PathMount> path_mounts;
};

// What a container's part in the kernel is keyed by, and where it is.
struct ContainerCgroup {
    uint64_t id = 0;     // its cgroup v2 directory's id
    int dir_fd = -1;     // that directory, where cgroup programs attach
    std::string pin_dir = CERB_PIN_DIR; // the maps and programs it uses (state.json keeps it)
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual Enforcement kind() const = 0;
    virtual Probe probe() const = 0;
    virtual std::vector<Coverage> coverage() const = 0;

    // Whatever the backend enforces through the config (masks over denied
    // paths, mount flags, sysctls), applied before the init is planned. May
    // refuse what it cannot make hold, naming the entry.
    virtual void adapt_spec(const Policy& policy, spec::Spec& spec, const std::string& rootfs) const = 0;

    // Adds the container's kernel entries, all or nothing; keys_file (in the
    // state dir) records what remove must take away.
    virtual void install(const CompiledPolicy& compiled, const ContainerCgroup& cgroup,
                         const std::string& keys_file) const = 0;
    // Removes what install added; a no-op for what is gone already.
    virtual void remove(const ContainerCgroup& cgroup, const std::string& keys_file) const = 0;

    // The seed compile_policy hashes paths with (0 when the backend has no path maps).
    virtual uint64_t path_seed() const = 0;

    // Before the container's processes exist: the objects they will apply,
    // still empty of path rules (the init inherits them across clone). spec
    // is the container's (adapted at create; the bundle's for exec).
    virtual ProcessRestrictions restrictions(const Policy& policy, const spec::Spec& spec) const = 0;
    // Fills them once the container's mounts are in place; root_fd is the
    // directory that is (or becomes, after pivot_root) the container's root.
    virtual void fill_restrictions(const Policy& policy, ProcessRestrictions& restrictions, int root_fd) const = 0;

    // pid, the runtime's process in the container (exec's child, or the init
    // at create), is not judged as the agent until it execs the container's
    // program. Its setns, chroot, mounts and change of identity need
    // capabilities the policy may forbid the agent (CAP_SYS_ADMIN,
    // CAP_SETUID...); the program it execs is checked as the agent's are.
    virtual void exempt_until_exec(pid_t pid, const ContainerCgroup& cgroup) const = 0;
};

// The backend of that kind (never automatic). Throws for a kind this build lacks.
const Backend& backend(Enforcement kind);

// The backend a policy runs under, with what it covers on this host (asked once: the BPF backends' answer
// reads their records and pins).
struct BackendChoice {
    const Backend* backend = nullptr;
    std::vector<Coverage> coverage;
    std::string passed_over; // auto: why each stronger backend was not taken
};

// The backend a policy runs under: the global flag (--enforcement) and the
// policy's minimum. A backend asked for must run here and carry out every
// rule of the policy (refused, naming the rule and the backend, otherwise);
// auto takes the strongest that does (the BPF LSM, fmod_ret, Landlock), and says in passed_over why
// each stronger one was not taken. Throws, naming what each lacks, when none fits.
BackendChoice choose_backend(Enforcement requested, const Policy& policy);

// Throws EOPNOTSUPP naming the first rule of the policy the backend cannot
// carry out (in the policy's mode); table is the backend's coverage().
void check_coverage(const Backend& backend, const std::vector<Coverage>& table, const Policy& policy);

// True when the policy has rules of that kind (escalation, cgroup_exit, other_processes: always).
bool uses_kind(const Policy& policy, RuleKind kind);

// The rule kinds the policy uses whose denials a backend with that coverage
// cannot report (written once at the top of the trail).
std::vector<RuleKind> unreported_kinds(const std::vector<Coverage>& table, const Policy& policy);

} // namespace cerberus::policy
