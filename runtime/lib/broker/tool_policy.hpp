// SPDX-License-Identifier: Apache-2.0
// The policy a brokered tool runs under, from the host's configuration only:
// credentials_dir/<tool>.policy, root's and writable by no one else, as the
// credentials are (never the annotation: the agent's side writes that). A
// policy document limited to what fits a process in the host's network and
// mount namespaces: allowed_hosts as addresses and networks (no DNS gate
// answers there: list the resolver too when the tool looks names up), enforced
// by the cgroup socket programs on a cgroup of the call's own; allowed_paths,
// read_only_paths and allowed_bins, enforced by a Landlock ruleset, the
// agent's working directory always writable. Without the file the tool keeps
// the host's network and reads what every user may (docs/threat-model.md, 32.5).
#pragma once

#include "base/fd.hpp"
#include "cgroup/cgroup.hpp"
#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace cerberus::broker {

// The tool's policy, or nullopt without a file; throws naming the file and the
// field for one that is not root's, does not parse, or asks what a tool's
// policy cannot have (host names, denied_paths, forbidden_caps, commands, audit mode).
std::optional<policy::Policy> read_tool_policy(const std::string& tool, const std::string& dir);

// Whose call it is: the tool's denials are written to the calling container's
// trail (audit::register_brokered_call), each marked with brokered.
struct CallTrail {
    std::string id;    // the container's
    std::string trail; // its audit trail
    nlohmann::json brokered; // {"tool": ..., "args": [...]}
};

// One call's confinement, made before its tool is forked and undone after it
// was reaped (before the call is answered): the call's cgroup under
// <cgroup2>/cerberus-tools (made and removed with it), registered with the
// audit collector as the calling container's, with the socket programs and
// the policy's entries (under allowed_hosts), and the Landlock ruleset (under
// path rules), whose rules are bound to the host's objects and to the working
// directory, open at workdir_fd.
class ToolConfinement {
public:
    ToolConfinement(const policy::Policy& policy, const std::string& cgroup2, const std::string& name,
                    int workdir_fd, const CallTrail& trail);
    ToolConfinement(ToolConfinement&& other) noexcept;
    ToolConfinement& operator=(ToolConfinement&&) = delete;
    // Kills whatever is still in the call's cgroup (a tool's child that left its
    // process group), has the collector write the call's last denials, then
    // removes the entries, the programs and the cgroup. Never throws.
    ~ToolConfinement();

    int cgroup_procs() const { return procs_.get(); } // -1: no cgroup; the child writes "0" to join it
    int ruleset() const { return ruleset_.get(); }    // -1: no ruleset
    uint32_t ruleset_flags() const { return ruleset_flags_; } // landlock_restrict_self's: denials logged after exec

private:
    void release() noexcept;

    std::optional<cgroups::Cgroup> cgroup_;
    std::string keys_file_;
    UniqueFd dir_fd_, procs_, ruleset_;
    uint64_t cgroup_id_ = 0;
    uint32_t ruleset_flags_ = 0;
    bool registered_ = false; // with the audit collector
};

} // namespace cerberus::broker
