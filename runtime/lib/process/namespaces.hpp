// SPDX-License-Identifier: Apache-2.0
// Creating, joining and setting up Linux namespaces (their names: oci/spec_names.hpp),
// and the id maps of a new user namespace.
#pragma once

#include "base/fd.hpp"
#include "oci/spec.hpp"

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace cerberus::namespaces {

// Flags of the namespaces the spec asks to create (those without a path).
int new_namespace_flags(const spec::Linux& linux);

// Namespaces to join by path, user namespace first so the others are joined
// with its privileges; pid and time last since they only affect children.
std::vector<spec::Namespace> joined_in_order(const spec::Linux& linux);

// A namespace opened to be joined. Opened first, then checked, then joined:
// a pid reused meanwhile cannot swap it.
struct Joinable {
    std::string type; // "network"
    std::string path;
    UniqueFd fd;
};

// Opens ns.path; errors name it.
Joinable open(const spec::Namespace& ns);

// setns into ns; errors name its type and path.
void join(const Joinable& ns);

// pid and time: joining them changes only the namespaces of later children.
bool for_children_only(const std::string& type);

// Joins namespaces (pid, time) for the children the caller clones meanwhile,
// and goes back when it goes, so that hooks and the rest of the runtime stay
// in the runtime's own.
class ForChildren {
public:
    explicit ForChildren(const std::vector<Joinable>& namespaces);
    ~ForChildren();
    ForChildren(const ForChildren&) = delete;
    ForChildren& operator=(const ForChildren&) = delete;

private:
    std::vector<std::pair<UniqueFd, int>> restore_; // our own, and its CLONE_NEW* flag
};

// Sets the loopback interface of a new network namespace up, as runc and crun
// do: engines that ask for a bare new namespace (podman --network none, ctr
// run) expect a working 127.0.0.1.
void bring_up_loopback();

// Writes /proc/<pid>/{uid_map,setgroups,gid_map} for a child in a new user namespace.
void write_id_maps(pid_t pid, const spec::Linux& linux);

} // namespace cerberus::namespaces
