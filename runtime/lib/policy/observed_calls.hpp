// SPDX-License-Identifier: Apache-2.0
// A system call of a landlock container judged against its policy: one the
// call observer saw fail (bpf/cerberus_observe.bpf.c: Landlock, seccomp and
// the runtime's read-only mounts refuse without a word), or, in audit mode,
// one the seccomp supervisor holds before it runs. The result is the record
// the BPF LSM programs would have written for the same action, or nothing when
// the policy allows what the call did (a failure of another cause: file
// permissions, a capability the policy does not forbid). The names the call
// passed are resolved in the container's root as the kernel resolves them:
// symlinks (the last one as the call asks), "..", the container's mounts.
#pragma once

#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace cerberus::policy {

struct ResolvedName {
    std::string path;      // as the container sees it
    bool exists = false;   // false: the last component does not exist (a call that would create it)
    bool resolved = false; // false: judged on the path as written, made absolute (no root to resolve it in)
};

// A name of the call (cerb_call_event.names[i]) resolved under root_fd, a
// directory that is the container's root (-1: none left, the path is only
// made absolute and cleaned of "." and ".."), following symlinks, the last
// one only when follow_last; one under /proc/self through the task's own
// /proc entry (pid, as the host sees it) while it lives.
ResolvedName resolve_name(int root_fd, const cerb_call_name& name, bool follow_last, pid_t pid = 0);

// The record of the refusal (verdict CERB_VERDICT_DENIED, with the errno the
// call returned) or of what enforce mode would refuse (CERB_VERDICT_AUDIT,
// with the errno it would return); nullopt when the policy lets the call do
// what it did. The event's task fields and time are the call's.
std::optional<cerb_event> judge_call(const Policy& policy, const cerb_call_event& call, int root_fd,
                                     uint8_t verdict);

// judge_call as the audit collector asks it: the policy as the registry keeps
// its document (parsed once per document).
class CallJudge {
public:
    std::optional<cerb_event> operator()(const cerb_call_event& call, const nlohmann::json& document, int root_fd,
                                         uint8_t verdict);

private:
    std::map<std::string, Policy> parsed_; // by the document's text
};

} // namespace cerberus::policy
