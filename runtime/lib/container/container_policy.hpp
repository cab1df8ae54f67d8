// SPDX-License-Identifier: Apache-2.0
// The one owner of a container's policy, from the decision to its removal.
// Its stages, in the order a create meets them (docs/architecture.md draws
// the timeline):
//
//   decide             before anything touches the host: the policy, its backend, compiled once
//   restrict_processes before the container's processes exist: what they apply themselves
//   install            once the cgroup exists, before the init goes on: the backend's entries
//                      keyed by the cgroup id, the trail's first line, the audit registration
//   exempt_until_exec  the runtime's process in the container, until it execs the agent
//   after_mounts       the container's root in place, the agent not yet run: the rules bound to
//                      its paths, the DNS gate, the collector's part
//   keep               create succeeded: the policy stays for as long as the container
//
// exec adopts the policy of a running container and goes through the
// processes' stages again; delete and the OCI hook's poststop adopt it and
// retire it. Until keep() (or for an adopted policy, never), destruction
// removes what install added: a failed create leaves no entry behind.
#pragma once

#include "audit/audit.hpp"
#include "base/fd.hpp"
#include "base/runtime_options.hpp"
#include "container/state.hpp"
#include "egress/egress_trust.hpp"
#include "oci/spec.hpp"
#include "policy/enforcement.hpp"
#include "policy/policy_setup.hpp"
#include "seccomp/seccomp.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace cerberus::container {

// Where a container's policy keeps its records: the document exec rebuilds
// the processes' part from (empty: none kept) and the keys of its map entries,
// which removal takes away.
struct PolicyRecords {
    std::string document;
    std::string keys;
};

class ContainerPolicy {
public:
    // create: the bundle's policy (none: an owner whose stages do nothing),
    // its backend chosen under --enforcement and checked, compiled once, and
    // what it forces applied to spec.
    static ContainerPolicy decide(const RuntimeOptions& rt, const std::string& id, spec::Spec& spec,
                                  const std::string& rootfs);
    // The OCI hook: a policy it resolved, under the BPF LSM, the one backend
    // that binds a container another runtime starts.
    static ContainerPolicy decide_for_hook(const RuntimeOptions& rt, const std::string& id, policy::Policy policy,
                                           spec::Spec& spec, const std::string& rootfs);
    // exec, delete, the hook's poststop: the policy an install made, found
    // by the backend's name and the pin dir it used ("" for either: a
    // build's from before them), keyed by cgroup_id.
    static ContainerPolicy adopt(const std::string& enforcement, const std::string& pin_dir, uint64_t cgroup_id,
                                 PolicyRecords records);
    // The same, from a container's state and directory (none unless st.has_policy).
    static ContainerPolicy adopt(const state::ContainerState& st, const state::ContainerDir& dir);

    ContainerPolicy(ContainerPolicy&& other) noexcept;
    ContainerPolicy& operator=(ContainerPolicy&&) = delete;
    ~ContainerPolicy();

    bool active() const { return backend_ != nullptr; }
    // The backend's name and the pin dir, as the state records them ("" for none).
    std::string enforcement() const;
    std::string pin_dir() const { return active() ? pin_dir_ : ""; }
    // What the policy forces on every process of the container (decided only).
    const launch::ProcessConstraints& forced() const { return prepared_.forced; }

    // Before the container's processes exist (the init inherits them): the
    // Landlock ruleset, the added seccomp filter and the path mounts they
    // apply, and in audit mode under the landlock backend the socket the
    // added filter's listener goes to the collector through. spec is the
    // container's (adapted at create; the bundle's for exec); spec_filter its
    // own seccomp filter: a process may have one listener only, refused naming
    // config when both have one.
    const policy::ProcessRestrictions& restrict_processes(const spec::Spec& spec,
                                                          const std::optional<seccomp::CompiledSeccomp>& spec_filter,
                                                          const std::string& config);
    // The process end of that socket (-1: none).
    int supervisor_fd() const { return supervisor_.process_end.get(); }

    // create (and the hook), once the container's cgroup v2 directory exists
    // and before the init goes on: keeps the document, installs the backend's
    // entries keyed by cgroup_id (their keys recorded), writes the trail's
    // first line and registers with the audit collector.
    void install(uint64_t cgroup_id, UniqueFd cgroup_dir, PolicyRecords records);

    // pid, the runtime's process in the container (the init at create, the
    // child at exec), is not judged as the agent until it execs.
    void exempt_until_exec(pid_t pid) const;

    // Once the container's mounts are in place and before the agent runs
    // (root_fd: its root): the processes' rules bound to what its paths
    // name; at create, a policy naming hosts has the DNS gate serve the
    // container (or create fails) and, under the landlock backend, the
    // collector gets the root (names of calls whose process is gone resolve
    // there); the collector gets the supervisor socket's other end.
    void after_mounts(int root_fd);

    // create succeeded: the policy stays for as long as the container (the
    // collector has confirmed it holds the root, before the agent can run).
    void keep() noexcept
    {
        root_handover_.confirm();
        armed_ = false;
    }
    // A failed create, in its unwinding order: the entries only (the
    // container never registered a trail worth finishing).
    void roll_back() noexcept;
    // delete, the hook's poststop: the collector writes the container's last
    // events and lost count, then the entries go, and the DNS gate forgets it.
    // The cgroup programs are not detached one by one: the cgroup is removed
    // next, and the kernel releases every program attached to it.
    void retire();

private:
    ContainerPolicy() = default;
    static ContainerPolicy decided(const RuntimeOptions& rt, const std::string& id, policy_setup::Prepared prepared);
    void remove_entries() const;
    std::string state_dir() const { return rt_.root + "/" + id_; }

    RuntimeOptions rt_;
    std::string id_;
    std::string rootfs_;                         // decided at create: the image the egress proxy's CA is added to
    egress::EgressPlan egress_;                  // decided at create: its bundles and the credentials the proxy sets
    // decided: the policy, its backend, compiled; adopted: the policy only, once exec reads its document
    policy_setup::Prepared prepared_;
    const policy::Backend* backend_ = nullptr;   // none: no policy
    uint64_t cgroup_id_ = 0;
    UniqueFd cgroup_dir_;                        // where the cgroup programs attach (installed here only)
    std::string keys_file_;
    std::string pin_dir_ = CERB_PIN_DIR;         // this build's, or the one the state records
    std::string document_;                       // adopted: where exec reads the policy from
    bool adopted_ = false;
    bool armed_ = false;                         // install has begun and keep() has not come
    policy::ProcessRestrictions restrictions_;
    struct SupervisorPair {
        UniqueFd collector_end, process_end;
    } supervisor_;
    audit::RootHandOver root_handover_;         // after_mounts to keep
};

} // namespace cerberus::container
