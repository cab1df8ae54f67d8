// SPDX-License-Identifier: Apache-2.0
// The container process's identity: groups, gid, uid and umask.
#pragma once

#include "oci/spec.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cerberus::user {

// Child, after capabilities::drop_bounding_set and before
// capabilities::apply_capabilities. Sets the supplementary groups to exactly
// additionalGids (skipped, like runc, when /proc/self/setgroups says "deny";
// then asking for additionalGids is an error), then gid and uid (real,
// effective and saved) keeping the permitted capabilities across the uid
// change, then the umask (default 0022). Changing credentials resets the
// parent-death signal and dumpable flag: the caller re-arms what it needs.
void apply_user(const spec::User& user);

// env with HOME set, as runc sets it, when env has none or an empty one: the
// home directory of uid in passwd_path (the container's /etc/passwd, read
// after entering its root), or "/" when no line names uid.
std::vector<std::string> environment_with_home(const std::vector<std::string>& env, uint32_t uid,
                                               const std::string& passwd_path = "/etc/passwd");

} // namespace cerberus::user
