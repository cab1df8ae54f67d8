// SPDX-License-Identifier: Apache-2.0
// The kernel's preemption model: whether a task can be preempted while it
// runs kernel code (full, lazy, RT) or only where the code yields (none,
// voluntary). A tracing program (fmod_ret) runs with migration disabled but
// preemptible under the first kind, and the trampoline skips a program that
// is entered again on a CPU where it is already running: a second task's call
// on that CPU goes unjudged (docs/policy.md, "fmod-ret, settled").
#pragma once

#include <optional>
#include <string>

namespace cerberus::kernel {

// "none", "voluntary", "full", "lazy" or "rt": /sys/kernel/debug/sched/preempt's current mode (debugfs is
// mounted in a private mount namespace of a child when the host has not mounted it), or, for a kernel
// whose model is fixed when built, what `uname -v` says; nullopt when neither tells. Kept for the boot.
std::optional<std::string> preemption_model();

// Whether that model lets a task be preempted inside kernel code (and so inside a tracing program).
bool preempts_kernel_code(const std::string& model);

} // namespace cerberus::kernel
