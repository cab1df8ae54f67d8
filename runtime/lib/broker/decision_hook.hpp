// SPDX-License-Identifier: Apache-2.0
// The host's own say on brokered calls, beside the policy's static rules: a
// webhook, or OPA through its REST data API, named in the host's broker
// configuration (broker_config, root's and writable by no one else; never the
// annotation: the pod's author writes that). It is asked about each call the
// static rules let run (or audit mode runs), and both must allow. It is asked
// off the broker's event loop, by a thread of the call's own that posts the
// call and sends the answer on a socket the loop watches, so that a slow
// endpoint holds up only its own call; no answer within the timeout, an
// unreachable endpoint or an answer that does not parse denies.
#pragma once

#include "base/fd.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>

namespace cerberus::broker {

inline constexpr const char* broker_config = "/etc/cerberus/broker.json";

struct DecisionHook {
    enum class Kind { webhook, opa } kind = Kind::webhook;
    std::string origin; // "http://127.0.0.1:8181"
    std::string path;   // "/decide", "/v1/data/cerberus/commands"
    std::chrono::milliseconds timeout{2000};

    // As the trail's command record names it: "webhook", "opa".
    const char* name() const { return kind == Kind::opa ? "opa" : "webhook"; }
};

// The hook the host's configuration names ({"decision": {"webhook"|"opa": URL, "timeout_ms": N}}), or
// nullopt without the file (or without "decision"); throws naming the file and the field.
std::optional<DecisionHook> read_decision_hook(const std::string& path);

// The webhook's body (OPA's "input"): the call and what the static rules said of it.
nlohmann::json hook_call(const std::string& container, const std::string& tool,
                         const std::vector<std::string>& args, const std::string& cwd, bool rules_allow,
                         const std::string& rule);

struct HookVerdict {
    bool allowed = false;
    std::string reason;
};

// Starts asking (a detached thread); the returned socket becomes readable with the verdict.
UniqueFd ask_hook(const DecisionHook& hook, const nlohmann::json& call);

// The verdict, once the socket is readable (a thread that said nothing: denied).
HookVerdict read_hook_verdict(int fd);

} // namespace cerberus::broker
