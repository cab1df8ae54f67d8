// SPDX-License-Identifier: Apache-2.0
// Device access on cgroup v2: a BPF_PROG_TYPE_CGROUP_DEVICE program built
// from the spec's device rules as raw instructions (no compiler needed).
#pragma once

#include "oci/spec.hpp"

#include <linux/bpf.h>

#include <cstdint>
#include <span>
#include <vector>

namespace cerberus::cgroups {

// BPF_DEVCG_ACC_* bits of an access string ("rwm").
inline constexpr uint32_t all_device_access = BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE;
uint32_t device_access_bits(const std::string& access);

// Throws for a type other than a, b, c or access letters other than r, w, m.
void check_device_rule(const spec::DeviceRule& rule);

// What every container may use, appended after the spec's rules as runc
// does: mknod of any node, null, zero, full, random, urandom, tty, ptmx and
// the pseudo-terminals.
std::vector<spec::DeviceRule> default_allowed_devices();

// The program: the last rule that matches a device and names an access bit
// decides that bit (as with the v1 devices controller); bits no rule decides
// are denied.
std::vector<bpf_insn> device_filter_program(std::span<const spec::DeviceRule> rules);

// Loads program and attaches it to the cgroup (BPF_F_ALLOW_MULTI), then
// detaches the device programs cerberus attached there before, so that an
// update replaces the filter without a moment of no filter. Others' programs
// (systemd's, for a scope with DevicePolicy=strict) stay: every one must allow.
void attach_device_filter(int cgroup_dir_fd, const std::vector<bpf_insn>& program);

} // namespace cerberus::cgroups
