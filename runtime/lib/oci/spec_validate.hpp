// SPDX-License-Identifier: Apache-2.0
// Checks a parsed spec before the runtime touches the host: every error is
// found before the first mkdir or clone.
#pragma once

#include "oci/spec.hpp"

#include <string>

namespace cerberus::spec {

// Throws Error naming the field, e.g. `linux.namespaces[2].type: unknown namespace "foo"`.
// rootfs_dir is the resolved root.path (it must exist).
void validate(const Spec& spec, const std::string& rootfs_dir);

// root.path resolved against the bundle directory.
std::string resolve_rootfs(const Spec& spec, const std::string& bundle_dir);

} // namespace cerberus::spec
