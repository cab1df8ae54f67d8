// SPDX-License-Identifier: Apache-2.0
// Global options of the runtime, shared by every command.
#pragma once

#include <string>

namespace cerberus {

struct RuntimeOptions {
    std::string root = "/run/cerberus";
    bool systemd_cgroup = false;
    std::string default_policy;                      // --default-policy FILE
    bool lock_policy = false;                        // --lock-policy
    std::string policy_dir = "/etc/cerberus/policies";
    std::string audit_dir = "/var/log/cerberus";     // --audit-dir: <id>.jsonl trails of policy denials
    std::string enforcement = "auto";                // --enforcement: auto, bpf-lsm, fmod-ret, landlock
};

} // namespace cerberus
