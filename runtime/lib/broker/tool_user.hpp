// SPDX-License-Identifier: Apache-2.0
// Who a brokered tool runs as on the host: not root, but an unprivileged user
// (nobody's uid and gid, no capabilities, no_new_privs), so that what the
// tool runs from the agent's working directory (git's hooks, its fsmonitor
// and filters) cannot read root's files, write the host's, signal or trace
// its root processes, or gain privileges through a set-id program. The agent's
// directory is mounted for the tool with the caller's owner mapped to that
// user (an idmapped mount), so the tool may change exactly the files the
// caller may, and they keep the caller's owner on disk.
#pragma once

#include "base/fd.hpp"

#include <sys/types.h>

namespace cerberus::broker {

struct ToolUser {
    uid_t uid = 0;
    gid_t gid = 0;
    UniqueFd idmap; // a user namespace mapping the caller's uid and gid to uid and gid
};

// The tool's user for a call by a caller of those filesystem ids (as the
// host's namespace sees them): nobody's uid and gid, the caller's mapped to them.
ToolUser tool_user(uid_t caller_uid, gid_t caller_gid);

} // namespace cerberus::broker
