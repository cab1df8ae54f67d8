// SPDX-License-Identifier: Apache-2.0
// allowed_hosts in learn mode: the DNS gate's audit records say which names
// the addresses of their answers came for; a connect or send to such an
// address is learned as the name on its port (a wildcard for fold_at or more
// names of one parent), to any other address as the address; a name an
// operator answered "always" when ask_hosts asked is learned on that entry's ports.
#include "base/error.hpp"
#include "cerberus_policy.h"
#include "policy/learn_lists.hpp"
#include "policy/policy_document.hpp"

namespace cerberus::policy {
namespace {

std::string address_text(const Cidr& address)
{
    return host_rule_text({.network = address});
}

// What the DNS gate recorded in audit mode, and the names answered "always".
void read_dns_record(const nlohmann::json& record, AskedNames& asked)
{
    if (record.value("type", "") != "dns")
        return;
    if (record.value("verdict", "") == "audit")
        asked.add(record.value("name", ""), record.value("address", ""));
    if (record.value("answer", "") == "always")
        asked.always.insert(record.value("name", ""));
}

// A connect or send to an address (a unix socket's path is allowed_paths').
bool take_connect(const Action& action, const std::string&, Learning& learning)
{
    if ((action.op != "connect" && action.op != "sendmsg") || action.target.empty() || action.target[0] == '/')
        return false;
    auto address = parse_address_target(action.target);
    if (!address)
        return false;
    std::string text = address_text(address->first);
    if (auto names = learning.asked.by_address.find(text); names != learning.asked.by_address.end()) {
        for (const auto& name : names->second)
            learning.names[name].insert(address->second);
        return true; // allowed by name, which denying_rule cannot judge (names are not resolved here)
    }
    learning.hosts.try_emplace(text, address->first, std::set<uint16_t>{}).first->second.second.insert(address->second);
    learning.must_allow(action, learn_allowed_hosts);
    return true;
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

void add_rule(HostRule rule, Learned& learned)
{
    if (!learned.policy.allowed_hosts)
        learned.policy.allowed_hosts.emplace();
    learned.added["allowed_hosts"].push_back(rule.text);
    learned.policy.allowed_hosts->push_back(std::move(rule));
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
    for (const auto& [entry, ports] : entries)
        for (auto& rule : host_rules({.host_name = entry}, ports))
            add_rule(std::move(rule), learned);
}

// A name an operator allowed for good when the DNS gate asked: allowed_hosts gets it, on the ports of the
// ask_hosts entry that asked (the grant was for that name alone, not the entry's wildcard).
void add_names_answered_always(const std::set<std::string>& names, Learned& learned)
{
    if (!learned.policy.ask_hosts)
        return;
    for (const auto& name : names) {
        for (const auto& entry : learned.policy.ask_hosts->names) {
            if (!host_name_matches(entry.host_name, name))
                continue;
            HostRule rule{.host_name = name, .ports = entry.ports};
            rule.text = host_rule_text(rule);
            add_rule(std::move(rule), learned);
            break;
        }
    }
}

void add_hosts(Learning& learning)
{
    Learned& learned = learning.learned;
    for (const auto& [text, address_ports] : learning.hosts)
        for (auto& rule : host_rules({.network = address_ports.first}, address_ports.second))
            add_rule(std::move(rule), learned);
    add_names(learning.names, learned);
    add_names_answered_always(learning.asked.always, learned);
    for (const auto& name : learning.asked.names)
        if (!learning.names.count(name))
            learned.only_asked.push_back(name);
}

} // namespace

void AskedNames::add(const std::string& name, const std::string& address)
{
    names.insert(name);
    if (address.empty())
        return;
    try {
        if (auto network = parse_host_rule(address, "address").network)
            by_address[address_text(*network)].insert(name);
    } catch (const Error&) {
        // not an address: the record tells nothing to learn from
    }
}

// Its entries allow exactly the addresses and ports recorded: nothing to settle.
const LearnExtraction learn_allowed_hosts = {
    .record = read_dns_record, .take = take_connect, .add = add_hosts, .settle = nullptr};

} // namespace cerberus::policy
