// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_learn.hpp"

#include "policy/learn_lists.hpp"
#include "policy/policy_document.hpp"
#include "policy/rule_lists.hpp"

#include <algorithm>

namespace cerberus::policy {
namespace {

using nlohmann::ordered_json;

// The list whose entries would allow an action the base denies takes it; what a
// deny-list denied, what no policy allows, and what no list takes stay denied.
void take(const Action& action, Learning& learning)
{
    auto rule = denying_rule(learning.base, action);
    if (!rule)
        return;
    bool explicit_denial = std::any_of(rule_lists().begin(), rule_lists().end(), [&](const RuleList& list) {
        return list.role == ListRole::deny_list && rule->starts_with(list.denial_rule());
    });
    if (!denied_under_any_policy(action) && !explicit_denial)
        for (const auto& list : rule_lists())
            if (list.learn && list.learn->take(action, *rule, learning))
                return;
    learning.keep_denied(action.op, action.target, *rule);
}

} // namespace

void read_for_learning(const nlohmann::json& record, AskedNames& asked)
{
    for (const auto& list : rule_lists())
        if (list.learn && list.learn->record)
            list.learn->record(record, asked);
}

Learned learn_policy(const Policy& base, const std::vector<Action>& actions, bool create_by_directory,
                     const AskedNames& asked)
{
    Learned learned;
    learned.policy = base;
    learned.policy.mode = Mode::enforce;
    Learning learning{.base = base, .create_by_directory = create_by_directory, .asked = asked, .learned = learned};
    for (const auto& action : actions)
        take(action, learning);
    for (const auto& list : rule_lists())
        if (list.learn)
            list.learn->add(learning);

    // What every list learned must allow each action it took; what it still denies is settled by its list.
    for (const auto& [action, by] : learning.fixable) {
        if (!denying_rule(learned.policy, action))
            continue;
        if (by->settle)
            by->settle(action, learning);
        if (auto rule = denying_rule(learned.policy, action))
            learning.keep_denied(action.op, action.target, *rule);
    }
    for (const auto& [key, times] : learning.still_denied) {
        const auto& [op, target, rule] = key;
        learned.still_denied.push_back({{"op", op}, {"target", target}, {"rule", rule}, {"times", times}});
    }
    return learned;
}

ordered_json learned_document(const Learned& learned, const ordered_json& source)
{
    ordered_json document = to_document(learned.policy);
    ordered_json section = source;
    section["added"] = learned.added;
    if (!learned.folded.empty()) {
        section["folded"] = learned.folded;
        section["folding"] = "a directory stands for its files when " + std::to_string(fold_at) +
                             " or more files directly in it were used, and under landlock for the names made in it "
                             "(never /, never a directory the base keeps read-only made writable); a wildcard "
                             "stands for as many names of one parent connected to (never a top-level domain's), "
                             "and a path glob parent/* for as many paths directly under one parent requested with "
                             "one method of one host (never /*)";
    }
    if (!learned.still_denied.empty()) {
        section["still_denied"] = learned.still_denied;
        section["why_still_denied"] = "learning only widens allow-lists: denied_paths and forbidden_caps stay as "
                                      "they were; escalations, raw sockets and unresolved paths are denied under "
                                      "every policy; a file the agent may write is never made an allowed "
                                      "binary (list it in read_only_paths and allowed_bins yourself if it belongs "
                                      "to the image); a command call a deny pattern matched stays denied, as "
                                      "does one with an argument no pattern word spells, and a request whose "
                                      "path no allowed_http entry spells";
    }
    if (!learned.only_asked.empty()) {
        section["only_asked"] = learned.only_asked;
        section["why_only_asked"] = "names the agent asked of the DNS gate but never connected to are not added "
                                    "(a lookup alone says no port); add NAME:PORT if the agent needs one";
    }
    document[learned_section] = section;
    return document;
}

} // namespace cerberus::policy
