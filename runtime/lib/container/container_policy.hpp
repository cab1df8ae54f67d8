// SPDX-License-Identifier: Apache-2.0
// One owner for a container's policy once it leaves create's preparation:
// the backend's part in the kernel (keyed by the container's cgroup) and its
// registration with the audit collector and the DNS gate. create installs and then registers;
// delete finishes with the collector and then removes; a create that fails
// removes only what it installed.
#pragma once

#include "audit/audit.hpp"
#include "base/runtime_options.hpp"
#include "cgroup/cgroup.hpp"
#include "container/state.hpp"
#include "policy/policy_setup.hpp"

#include <cstdint>
#include <string>

namespace cerberus::container {

// The trail's first line for a policy under that backend: the backend, and
// the rule kinds it cannot report or enforces only in part.
audit::TrailStart trail_start(const policy::Backend& backend, const policy::Policy& policy);

// The backend a container's policy runs under, as its state records it.
const policy::Backend& recorded_backend(const state::ContainerState& st);
// Where its pins are: the creating build's layout directory.
std::string recorded_pin_dir(const state::ContainerState& st);

class PolicyGuard {
public:
    // create: installs the backend's entries (the policy compiled once, in
    // prepare), then writes the trail's first line and registers with the
    // collector. Until keep(), destruction removes the entries again.
    static PolicyGuard install(const RuntimeOptions& rt, const std::string& id, policy_setup::Prepared& prepared,
                               const cgroups::Cgroup& cgroup, const state::ContainerDir& dir);

    // create, once the init's network namespace and mounts are in place and
    // before the agent runs (root_fd: the container's root): a policy that
    // names hosts has the DNS gate serve the container, or create fails.
    void open_dns_gate(const RuntimeOptions& rt, const std::string& id, const policy::Policy& policy,
                       int root_fd) const;

    // delete: the policy of a container create made (st.has_policy). The
    // cgroup programs are not detached one by one: delete removes the cgroup
    // next, and the kernel releases every program attached to it.
    static PolicyGuard adopt(const state::ContainerState& st, const state::ContainerDir& dir);

    PolicyGuard(PolicyGuard&& other) noexcept;
    PolicyGuard& operator=(PolicyGuard&&) = delete;
    ~PolicyGuard();

    // create succeeded: the policy stays for as long as the container.
    void keep() noexcept { armed_ = false; }

    // delete: the collector writes the container's last events and lost
    // count, then the entries go.
    void retire();

private:
    PolicyGuard(const policy::Backend& backend, uint64_t cgroup_id, UniqueFd cgroup_dir, std::string keys_file,
                std::string pin_dir);
    void remove_entries() const;

    const policy::Backend* backend_;
    uint64_t cgroup_id_;
    UniqueFd cgroup_dir_;
    std::string keys_file_;
    std::string pin_dir_; // where its entries are: this build's, or the one its state records
    bool armed_ = true;
};

} // namespace cerberus::container
