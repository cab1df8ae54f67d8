// SPDX-License-Identifier: Apache-2.0
// The policy's `commands`: which calls of a host tool the command broker runs
// for the agent. A tool's name maps to allow and deny patterns over its
// arguments (argv without argv[0]), word by word: a word `*` is any one word,
// a word ending in `*` (`feature/*`) any one word beginning so, and a last
// word `*` the rest (none or more words). Deny wins, then allow, then ask (the
// call is held until an operator answers, ask_timeout at most); a call no
// pattern matches is denied, as is any call of a tool not listed. docs/policy.md.
#pragma once

#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::policy {

// What the broker decided about one call, and the rule that decided it, as the
// trail words it: `commands.git.deny[0] "push --force *"`, `not in commands.git.allow`.
struct CommandDecision {
    bool allowed = false;
    bool ask = false; // an ask pattern matched: neither allowed nor denied until an operator answers
    std::string rule;
};

// How long an asked call of the rule waits for its answer.
inline constexpr std::chrono::milliseconds default_ask_timeout{60'000};
std::chrono::milliseconds ask_timeout_of(const CommandRule& rule);

// The decision for tool called with args under the policy's commands.
CommandDecision decide_command(const Commands& commands, const std::string& tool,
                               const std::vector<std::string>& args);

// Whether every argument list pattern matches, wide matches too.
bool pattern_covers(const std::string& wide, const std::string& pattern);

// The rule list's parts (rule_lists.cpp): the section read, checked, written
// back, combined under --lock-policy (the default's denials kept; its
// check, that a tool or allow pattern the default does not cover widens it,
// is policy_narrow's check_commands_narrowed).
void parse_commands(const nlohmann::json& value, const std::string& field, Policy& policy);
nlohmann::ordered_json write_commands(const Policy& policy);
void combine_commands(const Policy& locked_default, const Policy& annotation, Policy& narrowed);

// A tool's name as the shim is found by in the container: letters, digits and
// ".+_-", not starting with a dot, at most 64 bytes.
bool valid_tool_name(const std::string& name);

} // namespace cerberus::policy
