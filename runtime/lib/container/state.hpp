// Container state under --root: <root>/<id>/state.json (written atomically)
// and exec.fifo between create and start; one flock per container.
#pragma once

#include "base/fd.hpp"

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::state {

enum class Status { creating, created, running, paused, stopped };

const char* to_string(Status s);

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
    std::string hooks_json; // the spec's hooks, for poststart and poststop
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

    ContainerState load() const;
    void save(const ContainerState& s) const;
    void remove(); // removes the directory and everything in it

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
Status current_status(const ContainerState& s, const std::string& fifo_path);

// Start time of a process (field 22 of /proc/<pid>/stat), 0 when it is gone.
unsigned long long process_start_time(pid_t pid);

// True when pid is alive and is the same process the state recorded.
bool process_matches(const ContainerState& s);

// The runtime-spec state JSON that `state` prints and hooks receive on stdin.
std::string oci_state_json(const ContainerState& s, Status status);

std::string rfc3339_now();

} // namespace cerberus::state
