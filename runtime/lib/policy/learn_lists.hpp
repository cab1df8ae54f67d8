// SPDX-License-Identifier: Apache-2.0
// Learn mode's part of each rule list (the table in rule_lists.cpp points at
// these): which of an audit-mode trail's records feed the list, how an action
// the base denied becomes what an entry needs, and how those needs become the
// list's entries. learn_policy (policy_learn) only walks the table: a list
// without an extraction is left as the base has it.
#pragma once

#include "policy/policy.hpp"
#include "policy/policy_check.hpp"
#include "policy/policy_learn.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace cerberus::policy {

struct LearnExtraction;

// One learning over a trail's actions: what each list's extraction gathers
// from them, then the policy it widens (learned.policy starts as the base).
struct Learning {
    const Policy& base;
    bool create_by_directory; // see learn_policy
    const AskedNames& asked;
    Learned& learned;

    // allowed_hosts: the addresses connected to (by their text), the asked names connected to; with the ports.
    std::map<std::string, std::pair<Cidr, std::set<uint16_t>>> hosts;
    std::map<std::string, std::set<uint16_t>> names;
    // allowed_paths and read_only_paths: the files written and read; under create_by_directory the
    // names made in each directory; the entries allowed_paths learned (read_only_paths repeats none under them).
    std::set<std::string> writes, reads;
    std::map<std::string, std::set<std::string>> created;
    std::vector<std::string> written;
    // allowed_bins: the binaries executed.
    std::set<std::string> bins;
    // commands: tool -> the calls it ran, each as the allow pattern of exactly it.
    std::map<std::string, std::set<std::string>> calls;
    // allowed_http: "METHOD https://host[:port]" -> the paths requested.
    std::map<std::string, std::set<std::string>> requests;

    // Every action an added entry must allow, with the extraction of the list that took it.
    std::vector<std::pair<Action, const LearnExtraction*>> fixable;
    // (op, target, rule) -> times: what stays denied.
    std::map<std::tuple<std::string, std::string, std::string>, int> still_denied;

    void must_allow(const Action& action, const LearnExtraction& by) { fixable.emplace_back(action, &by); }
    void keep_denied(const std::string& op, const std::string& target, const std::string& rule)
    {
        ++still_denied[{op, target, rule}];
    }
    // Adds entries to an allow-list (made when absent) and to the record of what was added.
    void add_entries(std::optional<std::vector<std::string>>& list, const std::vector<std::string>& entries,
                     const char* field);
};

// How learn mode extracts a list's entries; a null member is a step the list has no part in.
struct LearnExtraction {
    // A record that is no agent's action but says what one meant (the DNS gate's names for the
    // addresses its answers carried), read before any action is taken.
    void (*record)(const nlohmann::json& record, AskedNames& asked);
    // Takes an action the base denies (rule: how) that an entry of the list would allow, gathering
    // what that entry needs, or keeping it denied; false when the action is not the list's. No two
    // lists take the same action; one no list takes stays denied.
    bool (*take)(const Action& action, const std::string& rule, Learning& learning);
    // Adds what was gathered to learning.learned, list after list in the table's order.
    void (*add)(Learning& learning);
    // An action the list took that the learned policy still denies (a longer entry of the base
    // decides against a folded directory): given an entry of its own where one can allow it.
    void (*settle)(const Action& action, Learning& learning);
};

// The extractions of the lists learning widens (rule_lists.cpp's entries point at them).
extern const LearnExtraction learn_allowed_hosts;   // learn_hosts.cpp
extern const LearnExtraction learn_allowed_paths;   // learn_paths.cpp
extern const LearnExtraction learn_read_only_paths; // learn_paths.cpp
extern const LearnExtraction learn_allowed_bins;    // learn_paths.cpp
extern const LearnExtraction learn_commands;        // learn_commands.cpp
extern const LearnExtraction learn_allowed_http;    // learn_http.cpp

} // namespace cerberus::policy
