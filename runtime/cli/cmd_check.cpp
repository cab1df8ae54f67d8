// SPDX-License-Identifier: Apache-2.0
// check: what this host can enforce. The kernel's side (LSM list, Landlock ABI,
// BTF, cgroup v2), each backend's probe, the one `auto` picks, and the rule
// kinds each backend enforces, reports and can audit.
#include "audit/audit.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "policy/backend_bpf.hpp"
#include "policy/enforcement.hpp"
#include "policy/landlock.hpp"
#include "policy/policy_setup.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace cerberus::cli {
namespace {

using policy::Enforcement;

constexpr Enforcement built_backends[] = {Enforcement::bpf_lsm, Enforcement::fmod_ret, Enforcement::landlock};

std::string cgroup2_text()
{
    try {
        auto mounts = cgroups::Mounts::detect();
        return mounts.unified.empty()
                   ? "not mounted"
                   : mounts.unified + (mounts.layout == cgroups::Layout::hybrid ? " (hybrid host)" : "");
    } catch (const Error& e) {
        return std::string("not found: ") + e.what();
    }
}

std::string cell(const policy::Coverage& row)
{
    std::string text = row.enforced == policy::Level::full      ? "enforced"
                       : row.enforced == policy::Level::partial ? "partly"
                                                                : "no";
    text += row.reported ? ", reported" : ", unreported";
    text += row.audit_mode ? ", audit" : ", no audit";
    return text;
}

} // namespace

int cmd_check(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 0, 0, "cerberus check");
    std::string lsms = policy::active_lsms();
    int abi = landlock::abi_version();
    std::printf("LSMs:          %s\n", lsms.empty() ? "(unreadable)" : lsms.c_str());
    std::printf("Landlock ABI:  %s\n", abi ? std::to_string(abi).c_str() : "none");
    std::printf("BTF:           %s\n", files::exists("/sys/kernel/btf/vmlinux") ? "/sys/kernel/btf/vmlinux" : "none");
    std::printf("cgroup v2:     %s\n", cgroup2_text().c_str());
    std::printf("memfd_noexec:  %s\n", files::exists("/proc/sys/vm/memfd_noexec") ? "yes" : "no (seccomp instead)");
    std::printf("pin dir:       %s (this build's BPF layout)\n", CERB_PIN_DIR);
    std::printf("audit run dir: %s\n", audit::run_dir);
    std::printf("\nbackends:\n");
    for (auto kind : built_backends) {
        auto probe = policy::backend(kind).probe();
        std::printf("  %-9s %s: %s\n", policy::enforcement_name(kind), probe.usable ? "usable" : "unusable",
                    probe.why.c_str());
    }
    std::string pick;
    try {
        pick = policy::enforcement_name(
            policy::choose_backend(policy_setup::requested_enforcement(rt), policy::Policy{}).backend->kind());
    } catch (const Error& e) {
        pick = std::string("none: ") + e.what();
    }
    std::printf("--enforcement %s picks: %s\n\n", rt.enforcement.c_str(), pick.c_str());

    std::printf("%-56s", "rule kind");
    for (auto kind : built_backends)
        std::printf(" %-34s", policy::enforcement_name(kind));
    std::printf("\n");
    std::vector<std::string> notes;
    for (auto rule : policy::all_rule_kinds) {
        std::printf("%-56s", policy::rule_kind_name(rule));
        for (auto kind : built_backends) {
            for (const auto& row : policy::backend(kind).coverage()) {
                if (row.kind != rule)
                    continue;
                std::printf(" %-34s", cell(row).c_str());
                if (!row.note.empty())
                    notes.push_back(std::string(policy::enforcement_name(kind)) + ", " + policy::rule_kind_name(rule) +
                                    ": " + row.note);
            }
        }
        std::printf("\n");
    }
    std::printf("\n");
    for (const auto& note : notes)
        std::printf("- %s\n", note.c_str());
    return 0;
}

} // namespace cerberus::cli
