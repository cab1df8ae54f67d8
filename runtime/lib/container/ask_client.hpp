// SPDX-License-Identifier: Apache-2.0
// The operator's side of asks (audit/asks.hpp), for `cerberus ask` and the
// dashboard: an answer or a revocation sent to what holds the ask or keeps
// the grant, over its socket (broker.sock for a command, gate.sock for a
// host name), where it takes root's (SO_PEERCRED) only. Both holders answer
// "ask <id> <answer>" and "revoke <grant id>" alike.
#pragma once

#include "audit/asks.hpp"

#include <string>

namespace cerberus::container {

// Sends "ask <id> <answer>" or "revoke <grant id>"; returns what the holder
// did ("ask a1b2c3d4 allowed once by uid 0"); throws with its words when it
// refused (an ask answered already, an unknown id) or none runs.
std::string answer_pending_ask(const std::string& id, const audit::AskAnswer& answer);
std::string revoke_grant(const std::string& grant_id);

} // namespace cerberus::container
