// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_records.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "policy/policy_check.hpp"
#include "policy/policy_learn.hpp"

#include <map>

namespace cerberus::policy {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

Policy as_enforcing(Policy p)
{
    p.mode = Mode::enforce;
    return p;
}

// The one policy the trail's runs had, from their start records.
Policy recorded_policy(const std::vector<json>& records, const std::string& trail)
{
    std::optional<json> document;
    for (const auto& record : records) {
        if (record.value("type", "") != "start")
            continue;
        json run = record.value("policy", json::object());
        run.erase("mode");
        if (document && *document != run)
            throw Error(trail + ": its runs had different policies (" + document->dump() + ", then " + run.dump() +
                            "); say which to widen with --base POLICY",
                        EINVAL);
        document = run;
    }
    if (!document)
        throw Error(trail + ": no start record says which policy the run had; give it with --base POLICY", EINVAL);
    return with_context(trail + ": the start record's policy", [&] { return parse_policy(document->dump()); });
}

} // namespace

ordered_json learn_from_records(const std::vector<json>& records, const std::string& trail,
                                const std::optional<std::string>& base_file, const std::string& learned_at)
{
    std::vector<Action> actions;
    ordered_json source;
    source["learned_from"] = trail;
    source["learned_at"] = learned_at;
    std::string first, last, container;
    uint64_t lost = 0;
    int runs = 0;
    bool landlock = false; // a run under the landlock backend: what it created is learned by directory
    AskedNames asked; // the DNS gate's audit records: names the policy did not list, and their answers
    for (const auto& record : records) {
        std::string type = record.value("type", "");
        read_for_learning(record, asked);
        if (type == "start") {
            ++runs;
            landlock = landlock || record.value("enforcement", "") == "landlock";
        }
        if (type == "lost" && record.contains("total") && record["total"].is_number_unsigned())
            lost = std::max(lost, record["total"].get<uint64_t>());
        if (auto action = action_of_record(record)) {
            actions.push_back(*action);
            std::string time = record.value("time", "");
            first = first.empty() ? time : first;
            last = time;
        }
        container = record.value("id", container);
    }
    Policy base;
    if (base_file) {
        base = with_context("--base " + *base_file, [&] { return parse_policy(files::read_file(*base_file)); });
        if (runs > 0) {
            // What the run's policy allowed and the base does not was never recorded.
            with_context("--base " + *base_file + " is narrower than the policy " + trail + " was recorded under", [&] {
                narrow_policy(as_enforcing(base), as_enforcing(recorded_policy(records, trail)));
            });
        }
        source["base"] = *base_file;
    } else {
        base = recorded_policy(records, trail);
        source["base"] = "the policy the container ran under (the trail's start record)";
    }
    source["container"] = container;
    source["runs"] = runs;
    source["actions_recorded"] = actions.size();
    if (!actions.empty())
        source["recorded"] = first + " to " + last;
    if (lost > 0)
        source["events_lost"] = std::to_string(lost) + " records were lost: actions among them are not in this policy";
    if (!asked.names.empty())
        source["names_asked"] = asked.names.size();
    return learned_document(learn_policy(base, actions, landlock, asked), source);
}

// Judged on the policy's addresses and networks: what the DNS gate admitted
// for a name is in its own trail records, not in the policy.
std::vector<Finding> check_records(const Policy& policy, const std::vector<json>& records)
{
    std::vector<Finding> findings;
    std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
    for (const auto& record : records) {
        auto action = action_of_record(record);
        if (!action)
            continue;
        auto rule = denying_rule(policy, *action);
        if (!rule)
            continue;
        auto [it, fresh] = index.try_emplace({action->op, action->target, *rule}, findings.size());
        if (fresh)
            findings.push_back({action->op, action->target, *rule, 0, record.value("time", "")});
        ++findings[it->second].times;
    }
    return findings;
}

} // namespace cerberus::policy
