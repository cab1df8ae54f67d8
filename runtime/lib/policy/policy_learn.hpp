// SPDX-License-Identifier: Apache-2.0
// Learn mode: from the actions an audit-mode trail recorded, the smallest
// widening of the policy the run had (or of a given base) under which none of
// them would have been denied. Allow-lists only grow: denied_paths,
// forbidden_caps and the commands' deny patterns stay as the base has them,
// and what no policy can allow (escalations, raw sockets) stays denied; both
// are listed. A brokered call is learned as the allow pattern of exactly it,
// a request the egress proxy decided as the allowed_http entry of exactly it.
// What each list learns, and from which records, is its entry's extraction in
// the table of rule lists (learn_lists.hpp); this walks the table.
#pragma once

#include "policy/policy.hpp"
#include "policy/policy_check.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace cerberus::policy {

// A directory replaces the files used directly in it when there are at least
// this many of them (never "/").
inline constexpr size_t fold_at = 3;

// What the DNS gate recorded in audit mode of names the policy does not list:
// the names asked, and the names each address of their answers came for.
struct AskedNames {
    std::set<std::string> names;
    std::map<std::string, std::set<std::string>> by_address; // as host_rule_text writes it: "203.0.113.7"
    std::set<std::string> always; // names of ask_hosts an operator answered "always" (allowed for good)

    // A dns record's name and the address it carries ("203.0.113.7", "2001:db8::7"; empty: none).
    void add(const std::string& name, const std::string& address);
};

// Reads a trail record into what the lists' extractions learn besides actions
// (the DNS gate's dns records into asked); records of no list's are passed over.
void read_for_learning(const nlohmann::json& record, AskedNames& asked);

struct Learned {
    Policy policy;                                              // mode enforce
    nlohmann::ordered_json added = nlohmann::ordered_json::object();  // field -> entries added
    nlohmann::ordered_json folded = nlohmann::ordered_json::object(); // directory -> the files it stands for
    nlohmann::ordered_json still_denied = nlohmann::ordered_json::array(); // {op, target, rule, times}
    nlohmann::ordered_json only_asked = nlohmann::ordered_json::array(); // names asked, never connected to
};

// Host names of base must have been resolved. by_directory: the policy is for
// the landlock backend, which grants creating a name only on the directory it
// is made in (a file missing when the container starts cannot have a rule of
// its own): a path the agent created is learned as its directory.
// A connect to an address an asked name's answer carried is learned as that
// name on the port (a wildcard in place of fold_at or more names of one parent
// of two labels or more), never as the address; a name asked and never
// connected to is not added (only_asked).
Learned learn_policy(const Policy& base, const std::vector<Action>& actions, bool create_by_directory = false,
                     const AskedNames& asked = {});

// The learned policy as a document, with the "_learned" section: source
// (from what and when, given by the caller) and what was added, folded and
// left denied.
nlohmann::ordered_json learned_document(const Learned& learned, const nlohmann::ordered_json& source);

} // namespace cerberus::policy
