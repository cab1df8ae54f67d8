// SPDX-License-Identifier: Apache-2.0
// Container state under --root: <root>/<id>/state.json (written atomically),
// exec.fifo between create and start, one flock per container; and the state
// machine every operation checks first (youki's container/state.rs).
#pragma once

#include "base/error.hpp"
#include "base/fd.hpp"
#include "oci/spec.hpp"
#include "process/process_launch.hpp"

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cerberus::state {

// A container's status, derived from what is on disk and in the kernel, never stored.
class Status {
public:
    enum Value : uint8_t { creating, created, running, paused, stopped };

    constexpr Status(Value value) : value_(value) {}
    constexpr operator Value() const { return value_; }

    // What each operation needs. Where runc and youki differ, runc decides:
    // a created container can be paused and deleted without --force.
    constexpr bool can_start() const { return value_ == created; }
    // kill --all goes to a stopped container too: processes may be left in its cgroup.
    constexpr bool can_kill() const { return value_ == created || value_ == running || value_ == paused; }
    constexpr bool can_pause() const { return value_ == created || value_ == running; }
    constexpr bool can_resume() const { return value_ == paused; }
    constexpr bool can_update() const { return can_kill(); }
    // delete --force removes a container in any status.
    constexpr bool can_delete() const { return value_ == created || value_ == stopped; }
    // exec --ignore-paused goes into a paused container too.
    constexpr bool can_exec() const { return value_ == created || value_ == running; }
    // events and stats.
    constexpr bool can_watch() const { return value_ != stopped; }

private:
    Value value_;
};

const char* to_string(Status s);

// The operations a status may refuse.
enum class Operation { start, kill, pause, resume, update, remove, exec, watch };

// Whether status allows op: the can_* of that operation.
bool allows(Status status, Operation op);

// The one "cannot X a container that is Y" error. Where runc has its own
// words for the case, they are kept: Docker, Podman and containerd match on
// them ("container not running" is "already finished" to containerd). The
// errno depends on the status alone: ESRCH when the container has stopped
// (its process is gone), EBUSY otherwise.
Error refusal(Operation op, Status status, const std::string& id);

struct ContainerState {
    std::string id;
    std::string bundle;
    std::string rootfs;
    std::string oci_version;
    pid_t pid = 0;
    unsigned long long pid_start_time = 0; // guards against pid reuse
    std::string created;                   // RFC 3339
    std::map<std::string, std::string> annotations;
    std::string cgroup_path;
    std::string systemd_unit; // the scope of --systemd-cgroup, "" for the cgroupfs driver
    bool creating = true; // cleared once create has finished
    bool has_policy = false;
    uint64_t cgroup_id = 0;
    spec::Hooks hooks; // poststart and poststop run after create
    // What the container's policy forces on every process in it, exec'd ones included.
    launch::ProcessConstraints forced;
    std::string enforcement; // the policy's backend ("landlock", "bpf-lsm"), when it has one
    // Where its BPF maps and programs are pinned (the creating build's layout);
    // empty in states of builds that pinned directly in CERB_PIN_ROOT.
    std::string pin_dir;
};

// A container's directory under the state root, locked for the lifetime of this object.
class ContainerDir {
public:
    ContainerDir(std::string path, UniqueFd lock);

    const std::string& path() const { return path_; }
    // The lock's fd: a forked child must close it, or it keeps the lock held.
    int lock_fd() const { return lock_.get(); }
    std::string fifo_path() const { return path_ + "/exec.fifo"; }
    // The map keys of the container's policy (policy_setup), when it has one.
    std::string policy_keys_path() const { return path_ + "/policy.keys"; }
    // The effective policy (policy_document), which exec applies too.
    std::string policy_path() const { return path_ + "/policy.json"; }

    ContainerState load() const;
    void save(const ContainerState& s) const;
    void remove(); // removes the directory and everything in it

    // Makes exec.fifo, on which the init blocks until start, and returns an
    // O_PATH fd of it for the init to reopen for writing.
    UniqueFd make_exec_fifo() const;
    bool has_exec_fifo() const;
    // start: lets the init of s go (it blocks opening exec.fifo for writing),
    // waits until it has exec'd the process, then removes exec.fifo. Fails
    // with ESRCH when the init dies first.
    void release_init(const ContainerState& s) const;

private:
    std::string path_;
    UniqueFd lock_;
};

class Store {
public:
    explicit Store(std::string root);

    // Creates <root>/<id>; fails with EEXIST when the container exists.
    ContainerDir create(const std::string& id) const;
    // Opens <root>/<id>, locked unless only reading (state, list: these must
    // not wait for a create whose hooks call them); ENOENT names the container.
    enum class Access { modify, read };
    ContainerDir open(const std::string& id, Access access = Access::modify) const;
    std::vector<std::string> list() const;
    const std::string& root() const { return root_; }

private:
    std::string root_;
};

// runc's rule: letters, digits, '_', '+', '-', '.'; not "." or "..".
void validate_id(const std::string& id);

// The status now: derived from the saved state, the process and exec.fifo.
Status current_status(const ContainerState& s, const ContainerDir& dir);

// Start time of a process (field 22 of /proc/<pid>/stat), 0 when it is gone.
unsigned long long process_start_time(pid_t pid);

// True when pid is alive and is the same process the state recorded.
bool process_matches(const ContainerState& s);

// The runtime-spec state JSON that `state` prints and hooks receive on stdin.
std::string oci_state_json(const ContainerState& s, Status status);

std::string rfc3339_now();

} // namespace cerberus::state
