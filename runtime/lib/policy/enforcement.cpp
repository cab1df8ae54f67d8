// SPDX-License-Identifier: Apache-2.0
#include "policy/enforcement.hpp"

#include "base/error.hpp"
#include "policy/backend_bpf.hpp"
#include "policy/backend_landlock.hpp"
#include "policy/rule_lists.hpp"

#include <algorithm>

namespace cerberus::policy {
namespace {

// The rows a policy brings: its lists' (rule_lists.hpp), and the shutting of
// escalation and of what lies outside the container, which every policy brings.
std::vector<RuleKind> kinds_used(const Policy& policy)
{
    std::vector<RuleKind> kinds;
    for (const auto& list : rule_lists()) {
        if (!list.present(policy))
            continue;
        for (RuleKind kind : list.coverage)
            if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
                kinds.push_back(kind);
    }
    kinds.insert(kinds.end(), {RuleKind::escalation, RuleKind::cgroup_exit, RuleKind::other_processes});
    return kinds;
}

// The policy field a rule kind comes from, for errors: the first list that brings it.
std::string field_of(RuleKind kind)
{
    for (const auto& list : rule_lists())
        if (std::find(list.coverage.begin(), list.coverage.end(), kind) != list.coverage.end())
            return std::string("policy.") + list.name;
    return "policy";
}

const Coverage& coverage_of(const std::vector<Coverage>& table, RuleKind kind)
{
    for (const auto& row : table)
        if (row.kind == kind)
            return row;
    throw Error(std::string("coverage table lacks ") + rule_kind_name(kind), EINVAL);
}

} // namespace

const char* rule_kind_name(RuleKind kind)
{
    switch (kind) {
    case RuleKind::allowed_hosts: return "allowed_hosts";
    case RuleKind::raw_sockets: return "raw and non-IP sockets";
    case RuleKind::paths: return "allowed_paths, read_only_paths";
    case RuleKind::path_changes: return "links, renames, removals, attributes";
    case RuleKind::denied_paths: return "denied_paths";
    case RuleKind::unix_sockets: return "unix sockets by path";
    case RuleKind::allowed_bins: return "allowed_bins";
    case RuleKind::exec_mappings: return "executable mappings";
    case RuleKind::forbidden_caps: return "forbidden_caps";
    case RuleKind::escalation: return "escalation (bpf, perf, modules, kexec, userns, mount)";
    case RuleKind::cgroup_exit: return "leaving the container's cgroup";
    case RuleKind::other_processes: return "processes outside the container, keyrings, userfaultfd";
    }
    return "?";
}

const Backend& backend(Enforcement kind)
{
    switch (kind) {
    case Enforcement::bpf_lsm: return bpf_lsm_backend();
    case Enforcement::landlock: return landlock_backend();
    case Enforcement::fmod_ret: return fmod_ret_backend();
    case Enforcement::automatic: break;
    }
    throw Error("enforcement \"auto\" names no backend", EINVAL);
}

// What auto tries, strongest first: the first this host can run that carries
// out every rule kind of the policy (in its mode) is taken.
constexpr Enforcement automatic_order[] = {Enforcement::bpf_lsm, Enforcement::fmod_ret, Enforcement::landlock};

BackendChoice choose_backend(Enforcement requested, const Policy& policy)
{
    std::string demand = std::string("the policy demands at least \"") + enforcement_name(policy.enforcement) + "\"";
    if (requested != Enforcement::automatic && requested < policy.enforcement)
        throw Error(std::string("--enforcement ") + enforcement_name(requested) + ": " + demand +
                        "; refusing to run the container unprotected",
                    EOPNOTSUPP);
    if (requested != Enforcement::automatic) {
        const Backend& chosen = backend(requested);
        if (Probe probe = chosen.probe(); !probe.usable)
            throw Error(std::string("enforcement \"") + enforcement_name(requested) + "\": " + probe.why +
                            "; refusing to run the container unprotected",
                        EOPNOTSUPP);
        BackendChoice choice{&chosen, chosen.coverage(), ""};
        check_coverage(chosen, choice.coverage, policy);
        return choice;
    }
    std::string missing;
    auto pass_over = [&](Enforcement kind, const std::string& why) {
        missing += std::string(missing.empty() ? "" : "; ") + enforcement_name(kind) + ": " + why;
    };
    for (auto kind : automatic_order) {
        if (kind < policy.enforcement)
            continue;
        const Backend& candidate = backend(kind);
        if (Probe probe = candidate.probe(); !probe.usable) {
            pass_over(kind, probe.why);
            continue;
        }
        BackendChoice choice{&candidate, candidate.coverage(), ""};
        try {
            check_coverage(candidate, choice.coverage, policy);
        } catch (const Error& e) {
            pass_over(kind, e.what());
            continue;
        }
        choice.passed_over = missing;
        return choice;
    }
    throw Error("no enforcement backend this host can run carries out every rule of the policy" +
                    (policy.enforcement == Enforcement::automatic ? std::string() : " (" + demand + ")") + ": " +
                    missing + "; refusing to run the container unprotected",
                EOPNOTSUPP);
}

void check_coverage(const Backend& backend, const std::vector<Coverage>& table, const Policy& policy)
{
    for (RuleKind kind : kinds_used(policy)) {
        const Coverage& row = coverage_of(table, kind);
        std::string where = field_of(kind) + ": the " + enforcement_name(backend.kind()) +
                            " backend cannot ";
        if (row.enforced == Level::none)
            throw Error(where + "enforce " + rule_kind_name(kind) + " (" + row.note + ")", EOPNOTSUPP);
        if (policy.mode == Mode::audit && !row.audit_mode)
            throw Error(where + "audit " + rule_kind_name(kind) + " (it can only deny: use mode \"enforce\", or " +
                            "--enforcement bpf-lsm on a host that has it)",
                        EOPNOTSUPP);
    }
}

bool uses_kind(const Policy& policy, RuleKind kind)
{
    auto kinds = kinds_used(policy);
    return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

std::vector<RuleKind> unreported_kinds(const std::vector<Coverage>& table, const Policy& policy)
{
    std::vector<RuleKind> unreported;
    for (RuleKind kind : kinds_used(policy))
        if (!coverage_of(table, kind).reported)
            unreported.push_back(kind);
    return unreported;
}

} // namespace cerberus::policy
