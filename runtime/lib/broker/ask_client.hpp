// SPDX-License-Identifier: Apache-2.0
// `cerberus ask`, the operator's side of asks (asks.hpp): the pending asks
// and the grants read from the broker's files (root's alone), and an answer
// or a revocation sent to the broker over broker.sock, where the broker
// takes root's (SO_PEERCRED) only.
#pragma once

#include "broker/asks.hpp"

#include <string>

namespace cerberus::broker {

// Sends "ask <id> <answer>" or "revoke <grant id>"; returns what the broker
// did ("ask a1b2c3d4 allowed once by uid 0"); throws with the broker's words
// when it refused (an ask answered already, an unknown id) or none runs.
std::string answer_pending_ask(const std::string& id, const AskAnswer& answer);
std::string revoke_grant(const std::string& grant_id);

} // namespace cerberus::broker
