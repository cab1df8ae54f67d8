// SPDX-License-Identifier: Apache-2.0
// The policy's `ask_hosts`: host names (as allowed_hosts writes them, with
// ports) whose lookup the DNS gate holds until an operator answers, and how
// long it waits: {"names": ["api.example.com:443", "*.example.org:443"],
// "ask_timeout": "60s"}. A name allowed_hosts allows is never asked about;
// an approved one resolves and is admitted as an allowed one, with the ports
// of the ask_hosts entries that match it. docs/policy.md.
#pragma once

#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace cerberus::policy {

// How long an asked lookup waits for its answer, then refused (commands' default too).
std::chrono::milliseconds ask_timeout_of(const AskHosts& ask_hosts);

// A duration of at most 24 hours: commands' and ask_hosts' ask_timeout (errors name field).
std::chrono::milliseconds parse_ask_timeout(const nlohmann::json& value, const std::string& field);

// The rule list's parts (rule_lists.cpp): the section read (each name checked
// as allowed_hosts checks its own, networks refused), checked against
// allowed_hosts (asking means something only where hosts are restricted),
// written back, and combined under --lock-policy (an annotation without it
// gets the default's; a timeout it leaves out, the default's). Its narrowing
// check is policy_narrow's check_ask_hosts_narrowed.
void parse_ask_hosts(const nlohmann::json& value, const std::string& field, Policy& policy);
void check_ask_hosts_within(const Policy& policy);
nlohmann::ordered_json write_ask_hosts(const Policy& policy);
void combine_ask_hosts(const Policy& locked_default, const Policy& annotation, Policy& narrowed);

} // namespace cerberus::policy
