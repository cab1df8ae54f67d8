// SPDX-License-Identifier: Apache-2.0
// The host-wide audit collector (`cerberus audit-collector`, started by
// audit::ensure_collector). Holds run_dir/collector.lock, so exactly one
// runs; reads the pinned ring buffer, writes each event to its container's
// trail, tells the BPF programs what it has read (cerb_event_acct, so a
// container's share of the buffer frees up) and writes lost counts. Answers
// "finish <cgroup id>" on collector.sock for delete. Exits once no policed
// container is registered.
//
// Under the landlock backend it also holds the call observer
// (kernel/call_observer) while landlock containers are registered, and has
// each call it reports judged against the container's policy by judge.
#pragma once

#include "kernel/pinned_maps.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>

namespace cerberus::audit {

// policy/observed_calls, which this folder may not include: the record of a
// call's refusal under the policy document, its names resolved under root_fd
// (the container's root; -1 when none is left), or nullopt when the policy
// did not refuse it.
using CallJudge = std::function<std::optional<cerb_event>(const cerb_call_event& call, const nlohmann::json& policy,
                                                          int root_fd, uint8_t verdict)>;

// Runs until no container is registered; returns the process exit status
// (0 also when another collector already runs). observe_calls = false keeps
// the call observer detached (`audit-collector --no-call-observer`, for
// bench/policy_native.sh to measure its cost): refusals the kernel audit log
// does not carry then do not reach the trails.
int run_collector(CallJudge judge, bool observe_calls = true);

} // namespace cerberus::audit
