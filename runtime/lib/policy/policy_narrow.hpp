// SPDX-License-Identifier: Apache-2.0
// The lists whose narrowing --lock-policy judges by membership (rule_lists'
// check_narrowed): each throws (EPERM) naming the first entry of the
// annotation's list that the locked default's does not allow.
#pragma once

#include "policy/policy.hpp"

namespace cerberus::policy {

// Networks by the addresses and ports they reach, names by the names they match.
void check_hosts_narrowed(const Policy& locked_default, const Policy& annotation);

// Each asked name covered by the default's allowed or asked names (asking is narrower than allowing, wider
// than refusing).
void check_ask_hosts_narrowed(const Policy& locked_default, const Policy& annotation);

// Each binary must be one the default lists.
void check_bins_narrowed(const Policy& locked_default, const Policy& annotation);

// Each tool one the default lists, each allow pattern covered by one of the default's for that tool.
void check_commands_narrowed(const Policy& locked_default, const Policy& annotation);

} // namespace cerberus::policy
