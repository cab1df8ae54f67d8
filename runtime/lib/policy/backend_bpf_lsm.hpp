// SPDX-License-Identifier: Apache-2.0
// The BPF LSM backend: every rule checked by LSM programs
// (bpf/cerberus_policy.bpf.c) attached once per host and pinned, so that
// enforcement never depends on a runtime process; a container's part is its
// map entries.
#pragma once

#include "policy/enforcement.hpp"

#include <string>

namespace cerberus::policy {

const Backend& bpf_lsm_backend();

// The kernel's active LSM list (securityfs is mounted there when it is not),
// "" when it cannot be read.
std::string active_lsms(const std::string& securityfs = "/sys/kernel/security");

} // namespace cerberus::policy
