// SPDX-License-Identifier: Apache-2.0
// The part of a container's policy every backend keys by its cgroup: the
// compiled policy's map entries (bpf_objects) and, where the backend needs
// them, the cgroup socket programs attached to the container's directory.
// One install and one removal, so the backends differ only in what they pass.
#pragma once

#include "policy/enforcement.hpp"
#include "policy/policy_compile.hpp"
#include "policy/socket_programs.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace cerberus::policy {

// Adds the entries (marked with backend_flags, their keys recorded in
// keys_file) and attaches the programs of the set, if any; all or nothing:
// entries whose programs cannot be attached are removed again. The programs
// must be loaded (socket_programs::ensure_loaded) before.
void install_container_part(const CompiledPolicy& compiled, const ContainerCgroup& cgroup,
                            const std::string& keys_file, uint32_t backend_flags,
                            std::optional<socket_programs::Set> programs);

// Removes what install added, from the pin dir the container used; a no-op
// for what is gone already. The programs are detached only where the
// cgroup's directory is open (delete removes the cgroup, which releases them).
void remove_container_part(const ContainerCgroup& cgroup, const std::string& keys_file);

} // namespace cerberus::policy
