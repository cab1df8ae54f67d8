// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_learn.hpp"

#include "base/error.hpp"
#include "cerberus_policy.h"
#include "policy/policy_document.hpp"
#include "policy/rule_lists.hpp"
#include "rootfs/paths.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

namespace cerberus::policy {
namespace {

using nlohmann::ordered_json;

const std::string writable_bin_rule = "not in allowed_bins, and the agent may write it";
const std::string unspellable_call_rule = "an argument no pattern word spells (empty, with spaces or a \"*\")";

struct Needs {
    std::map<std::string, std::pair<Cidr, std::set<uint16_t>>> hosts; // by address text
    std::map<std::string, std::set<uint16_t>> names; // asked names connected to, with the ports
    std::set<std::string> writes, reads, bins;
    std::map<std::string, std::set<std::string>> calls; // tool -> the calls it needs, as allow patterns
    std::map<std::string, std::set<std::string>> created; // directory -> the names made in it (create_by_directory)
    std::vector<Action> fixable; // every action an added entry must allow
    std::map<std::tuple<std::string, std::string, std::string>, int> still_denied;
};

std::string address_text(const Cidr& address)
{
    return host_rule_text({.network = address});
}

std::string parent_of(const std::string& path);

// The call as the allow pattern that matches it alone; nullopt when a word of it cannot be spelled.
std::optional<std::string> exact_pattern(const std::vector<std::string>& args)
{
    std::string pattern;
    for (const auto& arg : args) {
        bool spellable = !arg.empty() && arg.find('*') == std::string::npos &&
                         std::none_of(arg.begin(), arg.end(), [](unsigned char c) { return std::isspace(c); });
        if (!spellable)
            return std::nullopt;
        pattern += (pattern.empty() ? "" : " ") + arg;
    }
    return pattern;
}

// An ask's answer that let the action run for the moment (it stays asked), not for good.
bool allowed_for_now(const std::string& answer)
{
    return answer == "once" || answer.starts_with("for ") || answer.starts_with("grant ");
}

// A brokered call: its exact call allowed, unless a deny pattern matched it (deny-lists only shrink). A call an
// ask held is allowed only when an operator answered "always"; any other answer is the operator's to give again.
void collect_call(const Policy& base, const Action& action, const std::string& rule, Needs& needs)
{
    if (allowed_for_now(action.answer))
        return;
    bool refused = rule.starts_with("commands." + action.tool + ".deny") ||
                   (!action.answer.empty() && action.answer != "always"); // denied, timed out, never answered
    auto pattern = exact_pattern(action.args);
    if (refused || !base.commands.count(action.tool) || !pattern)
        ++needs.still_denied[{action.op, action.target, pattern ? rule : unspellable_call_rule}];
    else
        needs.calls[action.tool].insert(*pattern);
}

void collect(const Policy& base, const Action& action, bool create_by_directory, const AskedNames& asked,
             Needs& needs)
{
    auto rule = denying_rule(base, action);
    if (!rule)
        return;
    if (action.op == "command")
        return collect_call(base, action, *rule, needs);
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
    else if ((action.op == "connect" || action.op == "sendmsg") && address &&
             asked.by_address.count(address_text(address->first))) {
        for (const auto& name : asked.by_address.at(address_text(address->first)))
            needs.names[name].insert(address->second);
        return; // allowed by name, which denying_rule cannot judge (names are not resolved here)
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

// The ports as few ranges as they make, within what an entry holds.
std::vector<PortRange> port_ranges(const std::set<uint16_t>& ports)
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
    return ranges;
}

// One rule per address, or per name, and range of its ports.
std::vector<HostRule> host_rules(const HostRule& host, const std::set<uint16_t>& ports)
{
    std::vector<HostRule> rules;
    for (const auto& range : port_ranges(ports)) {
        HostRule rule = host;
        rule.ports = range;
        rule.text = host_rule_text(rule);
        rules.push_back(rule);
    }
    return rules;
}

// "*.cdn.example.com" for a name whose parent has fold_at or more of the names
// as children and two labels at least (never "*.com"); else the name itself.
std::string name_entry(const std::string& name, const std::map<std::string, std::set<std::string>>& by_parent)
{
    size_t dot = name.find('.');
    if (dot == std::string::npos)
        return name;
    std::string parent = name.substr(dot + 1);
    auto siblings = by_parent.find(parent);
    bool fold = parent.find('.') != std::string::npos && siblings != by_parent.end() &&
                siblings->second.size() >= fold_at;
    return fold ? "*." + parent : name;
}

void add_names(const std::map<std::string, std::set<uint16_t>>& names, Learned& learned)
{
    std::map<std::string, std::set<std::string>> by_parent;
    for (const auto& [name, ports] : names)
        if (size_t dot = name.find('.'); dot != std::string::npos)
            by_parent[name.substr(dot + 1)].insert(name);
    std::map<std::string, std::set<uint16_t>> entries;
    for (const auto& [name, ports] : names) {
        std::string entry = name_entry(name, by_parent);
        entries[entry].insert(ports.begin(), ports.end());
        if (entry != name)
            learned.folded[entry].push_back(name);
    }
    Policy& policy = learned.policy;
    if (!entries.empty() && !policy.allowed_hosts)
        policy.allowed_hosts.emplace();
    for (const auto& [entry, ports] : entries) {
        for (auto& rule : host_rules({.host_name = entry}, ports)) {
            learned.added["allowed_hosts"].push_back(rule.text);
            policy.allowed_hosts->push_back(std::move(rule));
        }
    }
}

// A name an operator allowed for good when the DNS gate asked: allowed_hosts gets it, on the ports of the
// ask_hosts entry that asked (the grant was for that name alone, not the entry's wildcard).
void add_names_answered_always(const std::set<std::string>& names, Learned& learned)
{
    Policy& policy = learned.policy;
    if (!policy.ask_hosts)
        return;
    for (const auto& name : names) {
        for (const auto& entry : policy.ask_hosts->names) {
            if (!host_name_matches(entry.host_name, name))
                continue;
            HostRule rule{.host_name = name, .ports = entry.ports};
            rule.text = host_rule_text(rule);
            if (!policy.allowed_hosts)
                policy.allowed_hosts.emplace();
            learned.added["allowed_hosts"].push_back(rule.text);
            policy.allowed_hosts->push_back(std::move(rule));
            break;
        }
    }
}

} // namespace

void AskedNames::add(const std::string& name, const std::string& address)
{
    names.insert(name);
    if (address.empty())
        return;
    try {
        if (auto network = parse_host_rule(address, "address").network)
            by_address[host_rule_text({.network = network})].insert(name);
    } catch (const Error&) {
        // not an address: the record tells nothing to learn from
    }
}

Learned learn_policy(const Policy& base, const std::vector<Action>& actions, bool create_by_directory,
                     const AskedNames& asked)
{
    Needs needs;
    for (const auto& action : actions)
        collect(base, action, create_by_directory, asked, needs);

    Learned learned;
    learned.policy = base;
    learned.policy.mode = Mode::enforce;
    Policy& policy = learned.policy;

    if (!needs.hosts.empty() && !policy.allowed_hosts)
        policy.allowed_hosts.emplace();
    for (const auto& [text, address_ports] : needs.hosts) {
        for (auto& rule : host_rules({.network = address_ports.first}, address_ports.second)) {
            learned.added["allowed_hosts"].push_back(rule.text);
            policy.allowed_hosts->push_back(std::move(rule));
        }
    }
    add_names(needs.names, learned);
    add_names_answered_always(asked.always, learned);
    for (const auto& name : asked.names)
        if (!needs.names.count(name))
            learned.only_asked.push_back(name);
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
    for (const auto& [tool, patterns] : needs.calls) {
        auto& allow = policy.commands[tool].allow;
        for (const auto& pattern : patterns) {
            if (std::find(allow.begin(), allow.end(), pattern) != allow.end())
                continue;
            allow.push_back(pattern);
            learned.added["commands." + tool + ".allow"].push_back(pattern);
        }
    }

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
                             "(never /, never a directory the base keeps read-only made writable); a wildcard "
                             "stands for as many names of one parent connected to (never a top-level domain's)";
    }
    if (!learned.still_denied.empty()) {
        section["still_denied"] = learned.still_denied;
        section["why_still_denied"] = "learning only widens allow-lists: denied_paths and forbidden_caps stay as "
                                      "they were; escalations, raw sockets and unresolved paths are denied under "
                                      "every policy; a file the agent may write is never made an allowed "
                                      "binary (list it in read_only_paths and allowed_bins yourself if it belongs "
                                      "to the image); and a command call a deny pattern matched stays denied, as "
                                      "does one with an argument no pattern word spells";
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
