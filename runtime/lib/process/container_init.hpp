// SPDX-License-Identifier: Apache-2.0
// The container's init: the process cloned into the new namespaces. It sets
// up the container step by step, reporting to the parent over the sync
// channel, then waits on exec.fifo until `start` and execs the user process.
#pragma once

#include "oci/spec.hpp"
#include "process/capabilities.hpp"
#include "process/sync_channel.hpp"
#include "rootfs/mounts.hpp"
#include "seccomp/seccomp.hpp"

#include <optional>
#include <string>

namespace cerberus::container {

// Everything the init needs, prepared by the parent before clone.
struct InitPlan {
    const spec::Spec* spec = nullptr;
    std::string rootfs;
    int fifo_fd = -1;    // O_PATH fd of exec.fifo; -1 for exec-less runs
    int console_fd = -1; // connected --console-socket, or -1
    int preserve_fds = 0;
    bool no_pivot = false;
    bool no_new_keyring = false;
    bool new_user_namespace = false;
    bool in_user_namespace = false;
    bool new_network_namespace = false;
    bool new_mount_namespace = true;
    std::vector<mounts::CgroupV1View> cgroup_v1; // the container's v1 cgroups, on v1/hybrid hosts
    std::vector<int> cgroup_v1_tasks;             // their tasks files (Cgroup::open_v1_tasks): the init moves itself in
    std::optional<seccomp::CompiledSeccomp> seccomp;
    capabilities::CapabilitySets capabilities;
    // What an enforcement backend has the container's processes do themselves:
    // mounts after pivot_root, and, once exec.fifo is opened, a Landlock
    // ruleset and a second seccomp filter applied just before execve.
    std::vector<mounts::PathMount> path_mounts;
    int landlock_ruleset_fd = -1;
    uint32_t landlock_flags = 0;
    std::optional<seccomp::CompiledSeccomp> added_seccomp;
};

// Runs in the child after clone; never returns. On failure it sends the error
// to the parent and exits 1.
[[noreturn]] void run_init(const InitPlan& plan, SyncChannel& channel);

} // namespace cerberus::container
