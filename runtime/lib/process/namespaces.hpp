// SPDX-License-Identifier: Apache-2.0
// Creating, joining and setting up Linux namespaces (their names: oci/spec_names.hpp),
// and the id maps of a new user namespace.
#pragma once

#include "oci/spec.hpp"

#include <sys/types.h>

#include <vector>

namespace cerberus::namespaces {

// Flags of the namespaces the spec asks to create (those without a path).
int new_namespace_flags(const spec::Linux& linux);

// Namespaces to join by path, user namespace first so the others are joined
// with its privileges; pid and time last since they only affect children.
std::vector<spec::Namespace> joined_in_order(const spec::Linux& linux);

// Sets the loopback interface of a new network namespace up, as runc and crun
// do: engines that ask for a bare new namespace (podman --network none, ctr
// run) expect a working 127.0.0.1.
void bring_up_loopback();

// Writes /proc/<pid>/{uid_map,setgroups,gid_map} for a child in a new user namespace.
void write_id_maps(pid_t pid, const spec::Linux& linux);

} // namespace cerberus::namespaces
