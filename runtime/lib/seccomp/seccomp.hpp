// SPDX-License-Identifier: Apache-2.0
// Seccomp: the filter is compiled to BPF in the parent (libseccomp, which may
// allocate and fail freely there) and only installed by the container's init,
// with one seccomp(2) call.
#pragma once

#include "oci/spec.hpp"

#include <linux/filter.h>
#include <linux/seccomp.h>

#include <optional>
#include <string>
#include <vector>

namespace cerberus::seccomp {

struct CompiledSeccomp {
    std::vector<sock_filter> program;
    // SECCOMP_FILTER_FLAG_* for seccomp(2): the spec's flags, plus NEW_LISTENER
    // when a rule uses SCMP_ACT_NOTIFY.
    unsigned flags = 0;

    bool has_listener() const;
};

// Parent. Throws Error naming the offending field, e.g.
// `linux.seccomp.syscalls[3].action: unknown action "SCMP_ACT_FOO"`.
// Syscall names unknown to libseccomp are skipped, as runc does. Unless the
// default action lets calls through, calls newer than the profile's get
// ENOSYS (seccomp_enosys.hpp), as under runc.
CompiledSeccomp compile(const spec::Seccomp& config);

// Parent. compile(), with the exported program kept in cache_dir (created
// if missing) under a key made of the profile, libseccomp's version and the
// kernel's uname. Only successful compilations are stored; failing to store
// one is logged at debug level and ignored. Entries are never evicted.
CompiledSeccomp compile_cached(const spec::Seccomp& config, const std::string& cache_dir);

// Child. Installs the filter; without no_new_privs this needs CAP_SYS_ADMIN,
// so it must then run before capabilities are dropped. Returns the
// notification listener fd when has_listener(), else -1.
int install(const CompiledSeccomp& filter);

// Parent (the runtime process, whose mount namespace holds listener_path):
// sends the runtime-spec containerProcessState with listener_fd attached
// (SCM_RIGHTS) to the unix stream socket at listener_path. state_json is the
// container's state (`cerberus state` output, status "creating") and must
// contain its "pid".
void send_listener(int listener_fd, const std::string& listener_path, const std::string& state_json,
                   const std::string& metadata);

// Supervisor (a listener's holder). The next notification on the listener;
// nullopt when there is none, or its task went away before it was read.
std::optional<seccomp_notif> receive_notification(int listener_fd);

// Whether the notification's task still waits in that call: a path read from
// its memory before this was true is the call's.
bool notification_valid(int listener_fd, uint64_t id);

// Lets the call run as the task made it (SECCOMP_USER_NOTIF_FLAG_CONTINUE).
// Only for a supervisor that refuses nothing: the task may change what its
// arguments point to after they were read.
void let_through(int listener_fd, uint64_t id);

} // namespace cerberus::seccomp
