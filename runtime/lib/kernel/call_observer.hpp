// SPDX-License-Identifier: Apache-2.0
// The landlock backend's call observer (bpf/cerberus_observe.bpf.c): what
// this kernel lets it do, found once per boot, and its programs attached for
// as long as an object here holds them. The audit collector holds them while
// landlock containers are registered: the sys_exit tracepoint runs on every
// system call's return on the host, so nothing keeps it attached longer.
// The programs themselves are verified once per boot and build and pinned
// beside the maps: a collector that starts again only attaches them.
#pragma once

#include "base/fd.hpp"

#include <linux/seccomp.h>

#include <string>
#include <vector>

struct cerb_call_event;

namespace cerberus::kernel {

// How the observer learns of uses of forbidden capabilities on this kernel:
// not at all, from the cap_capable tracepoint (Linux 6.14 on; refusals only,
// paired with the call that failed), or from a kprobe (uses and refusals).
enum class CapabilityChecks { none, tracepoint, kprobe };

struct ObserverSupport {
    bool calls = false; // failed calls observed at their return
    std::string why;    // when not: what the kernel refused
    CapabilityChecks capabilities = CapabilityChecks::none;
};

// Tried once per boot (loaded, attached, let go) and remembered in
// /run/cerberus-enforcement/observer. Never throws.
ObserverSupport observer_support();

class CallObserver {
public:
    // Attaches the pinned programs, loading and pinning them first when this
    // boot has none (they reuse this build's pinned maps, which must exist).
    // Throws saying what the kernel refused.
    static CallObserver attach();

    CapabilityChecks capabilities() const { return capabilities_; }

private:
    std::vector<UniqueFd> attachments_; // closing them detaches the programs
    CapabilityChecks capabilities_ = CapabilityChecks::none;
};

// A call the audit-mode supervisor holds (a seccomp notification), as the
// observer would have sent it: the names it passes read from the stopped
// task's memory, the directories they start from from its /proc entry.
// err is 0 (the call has not run).
cerb_call_event call_of_notification(const seccomp_notif& notification);

} // namespace cerberus::kernel
