// SPDX-License-Identifier: Apache-2.0
// A system call newer than every one a profile names must fail with ENOSYS,
// not with the profile's default errno: glibc falls back to an older call on
// ENOSYS (clone3 to clone, faccessat2 to faccessat) but gives up on EPERM, so
// an old profile would break new programs. libseccomp can only apply the
// default action, so a stub goes before its program, as runc's patchbpf does.
#pragma once

#include "oci/spec.hpp"

#include <linux/filter.h>

#include <cstdint>
#include <vector>

namespace cerberus::seccomp {

// The instructions to put before libseccomp's program for a filter with
// default_action on architectures (SCMP_ARCH_* values, the native one
// included). Per architecture, a call numbered above the largest that any
// rule of config names returns ENOSYS; every other call, and every other
// architecture, goes on to the instruction after the stub.
// Empty when the default action lets calls through to the kernel, which
// answers ENOSYS itself, when it already is ENOSYS, or when no name resolves.
std::vector<sock_filter> enosys_stub(const spec::Seccomp& config, uint32_t default_action,
                                     const std::vector<uint32_t>& architectures);

} // namespace cerberus::seccomp
