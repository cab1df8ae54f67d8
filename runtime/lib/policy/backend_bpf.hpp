// SPDX-License-Identifier: Apache-2.0
// The BPF program backends: every rule checked by the policy programs
// (bpf/cerberus_policy.bpf.c), attached once per host and pinned, so that
// enforcement never depends on a runtime process; a container's part is its
// map entries. The same programs attach as BPF LSM programs where the kernel
// has the BPF LSM active, or as fmod_ret programs on the kernel's security_
// functions where it does not (policy/bpf_hooks).
#pragma once

#include "policy/enforcement.hpp"

#include <string>

namespace cerberus::policy {

const Backend& bpf_lsm_backend();
const Backend& fmod_ret_backend();

// The kernel's active LSM list (securityfs is mounted there when it is not),
// "" when it cannot be read.
std::string active_lsms(const std::string& securityfs = "/sys/kernel/security");

} // namespace cerberus::policy
