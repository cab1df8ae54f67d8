// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_learn.hpp"

#include "cerberus_policy.h"
#include "policy/policy_document.hpp"
#include "policy/rule_lists.hpp"
#include "rootfs/paths.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cerberus::policy {
namespace {

using nlohmann::ordered_json;

const std::string writable_bin_rule = "not in allowed_bins, and the agent may write it";

struct Needs {
    std::map<std::string, std::pair<Cidr, std::set<uint16_t>>> hosts; // by address text
    std::set<std::string> writes, reads, bins;
    std::map<std::string, std::set<std::string>> created; // directory -> the names made in it (create_by_directory)
    std::vector<Action> fixable; // every action an added entry must allow
    std::map<std::tuple<std::string, std::string, std::string>, int> still_denied;
};

std::string address_text(const Cidr& address)
{
    return host_rule_text({.network = address});
}

std::string parent_of(const std::string& path);

void collect(const Policy& base, const Action& action, bool create_by_directory, Needs& needs)
{
    auto rule = denying_rule(base, action);
    if (!rule)
        return;
    bool explicit_denial = std::any_of(rule_lists().begin(), rule_lists().end(), [&](const RuleList& list) {
        return list.role == ListRole::deny_list && rule->starts_with(list.denial_rule());
    });
    auto address = action.target.empty() || action.target[0] == '/' ? std::nullopt
                                                                      : parse_address_target(action.target);
    if (denied_under_any_policy(action) || explicit_denial) {
        ++needs.still_denied[{action.op, action.target, *rule}];
        return;
    }
    if (action.op == "exec")
        needs.bins.insert(action.target);
    else if (action.op == "create" && create_by_directory && !action.target.empty() && action.target[0] == '/') {
        std::string directory = parent_of(action.target);
        // A directory the base keeps read-only is not made writable for a name made in it.
        if (auto kept = denying_rule(base, {.op = "open", .target = directory, .write = true});
            kept && kept->rfind("read_only_paths ", 0) == 0) {
            ++needs.still_denied[{action.op, action.target, *kept}];
            return;
        }
        needs.writes.insert(directory);
        needs.created[directory].insert(action.target);
    }
    else if ((action.op == "connect" || action.op == "sendmsg") && address)
        needs.hosts.try_emplace(address_text(address->first), address->first, std::set<uint16_t>{})
            .first->second.second.insert(address->second);
    else if (!action.target.empty() && action.target[0] == '/')
        (action.op != "mmap_exec" && writes_path(action) ? needs.writes : needs.reads).insert(action.target);
    else {
        ++needs.still_denied[{action.op, action.target, *rule}];
        return;
    }
    needs.fixable.push_back(action);
}

std::string parent_of(const std::string& path)
{
    size_t slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

bool covered(const std::string& path, const std::vector<std::string>& entries)
{
    return std::any_of(entries.begin(), entries.end(), [&](const auto& entry) { return paths::within(path, entry); });
}

// The files, with a directory in place of fold_at or more files directly in it.
std::vector<std::string> fold(const std::set<std::string>& files, const std::vector<std::string>& keep_apart,
                              ordered_json& folded)
{
    std::map<std::string, std::vector<std::string>> by_parent;
    for (const auto& file : files)
        by_parent[parent_of(file)].push_back(file);
    std::vector<std::string> entries;
    for (const auto& [parent, children] : by_parent) {
        bool fold_here = parent != "/" && children.size() >= fold_at &&
                         std::find(keep_apart.begin(), keep_apart.end(), parent) == keep_apart.end();
        if (fold_here) {
            entries.push_back(parent);
            folded[parent] = children;
        } else {
            entries.insert(entries.end(), children.begin(), children.end());
        }
    }
    // A file under a folded directory needs no entry of its own.
    std::vector<std::string> kept;
    for (const auto& entry : entries) {
        bool under_other = std::any_of(entries.begin(), entries.end(), [&](const auto& other) {
            return other != entry && paths::within(entry, other);
        });
        if (!under_other)
            kept.push_back(entry);
    }
    return kept;
}

// Adds entries to an allow-list (made when absent) and to the record of what was added.
void add_paths(std::optional<std::vector<std::string>>& list, const std::vector<std::string>& entries,
               const char* field, ordered_json& added)
{
    if (entries.empty())
        return;
    if (!list)
        list.emplace();
    for (const auto& entry : entries) {
        if (std::find(list->begin(), list->end(), entry) != list->end())
            continue;
        list->push_back(entry);
        added[field].push_back(entry);
    }
}

// One rule per address; its ports as few ranges as they make, within what an entry holds.
std::vector<HostRule> host_rules(const Cidr& address, const std::set<uint16_t>& ports)
{
    std::vector<PortRange> ranges;
    for (uint16_t port : ports) {
        if (!ranges.empty() && ranges.back().last + 1 == port)
            ranges.back().last = port;
        else
            ranges.push_back({port, port});
    }
    if (ranges.size() > CERB_MAX_PORT_RANGES)
        ranges = {{*ports.begin(), *ports.rbegin()}};
    std::vector<HostRule> rules;
    for (const auto& range : ranges) {
        HostRule rule{.network = address, .ports = range};
        rule.text = host_rule_text(rule);
        rules.push_back(rule);
    }
    return rules;
}

} // namespace

Learned learn_policy(const Policy& base, const std::vector<Action>& actions, bool create_by_directory)
{
    Needs needs;
    for (const auto& action : actions)
        collect(base, action, create_by_directory, needs);

    Learned learned;
    learned.policy = base;
    learned.policy.mode = Mode::enforce;
    Policy& policy = learned.policy;

    if (!needs.hosts.empty() && !policy.allowed_hosts)
        policy.allowed_hosts.emplace();
    for (const auto& [text, address_ports] : needs.hosts) {
        for (auto& rule : host_rules(address_ports.first, address_ports.second)) {
            learned.added["allowed_hosts"].push_back(rule.text);
            policy.allowed_hosts->push_back(std::move(rule));
        }
    }
    // A directory the base keeps read-only is not made writable by folding.
    auto writes = fold(needs.writes, base.read_only_paths.value_or(std::vector<std::string>{}), learned.folded);
    add_paths(policy.allowed_paths, writes, "allowed_paths", learned.added);
    for (const auto& [directory, names] : needs.created)
        if (std::find(writes.begin(), writes.end(), directory) != writes.end())
            learned.folded[directory] = names;
    std::set<std::string> reads;
    for (const auto& path : needs.reads)
        if (!covered(path, writes))
            reads.insert(path);
    add_paths(policy.read_only_paths, fold(reads, {}, learned.folded), "read_only_paths", learned.added);
    // A binary the agent may write could be replaced with anything: it stays denied.
    std::vector<std::string> bins;
    for (const auto& bin : needs.bins) {
        bool writable = policy.restricts_paths() && !denying_rule(policy, {.op = "open", .target = bin, .write = true});
        if (writable) {
            ++needs.still_denied[{"exec", bin, writable_bin_rule}];
            std::erase_if(needs.fixable, [&](const Action& a) { return a.op == "exec" && a.target == bin; });
        } else {
            bins.push_back(bin);
        }
    }
    add_paths(policy.allowed_bins, bins, "allowed_bins", learned.added);

    // A longer entry of the base can still decide against a folded directory
    // (a read-only file inside it): such a path gets an entry of its own.
    for (const auto& action : needs.fixable) {
        if (!denying_rule(policy, action))
            continue;
        bool write = action.op != "mmap_exec" && writes_path(action);
        add_paths(write ? policy.allowed_paths : policy.read_only_paths, {action.target},
                  write ? "allowed_paths" : "read_only_paths", learned.added);
        if (auto rule = denying_rule(policy, action))
            ++needs.still_denied[{action.op, action.target, *rule}];
    }
    for (const auto& [key, times] : needs.still_denied) {
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
                             "(never /, never a directory the base keeps read-only made writable)";
    }
    if (!learned.still_denied.empty()) {
        section["still_denied"] = learned.still_denied;
        section["why_still_denied"] = "learning only widens allow-lists: denied_paths and forbidden_caps stay as "
                                      "they were; escalations, raw sockets and unresolved paths are denied under "
                                      "every policy; and a file the agent may write is never made an allowed "
                                      "binary (list it in read_only_paths and allowed_bins yourself if it belongs "
                                      "to the image)";
    }
    document[learned_section] = section;
    return document;
}

} // namespace cerberus::policy
