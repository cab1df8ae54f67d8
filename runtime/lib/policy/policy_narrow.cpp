// SPDX-License-Identifier: Apache-2.0
// --lock-policy: an annotation may only narrow the locked default. Judged on
// the effective policy, path by path and network by network, never on which
// lists hold which entries: leaving out a nested read-only entry, or listing
// it in allowed_paths, changes what is allowed as surely as adding a path.
#include "policy/policy.hpp"

#include "base/error.hpp"
#include "policy/policy_access.hpp"
#include "policy/policy_commands.hpp"
#include "policy/policy_json.hpp"
#include "policy/policy_narrow.hpp"
#include "policy/rule_lists.hpp"

#include <algorithm>
#include <initializer_list>

namespace cerberus::policy {

namespace {

[[noreturn]] void widens(const std::string& field, const std::string& what)
{
    throw Error(field + ": " + what + " widens the locked default policy", EPERM);
}

// The policy the container would get: each list combined as its rule list
// says (the annotation's, or the default's where it has none; denials added up).
Policy combined(const Policy& base, const Policy& annotation)
{
    Policy out = annotation;
    for (const auto& list : rule_lists())
        list.combine(base, annotation, out);
    return out;
}

std::string gained(const PathAccess& wide, const PathAccess& base)
{
    if (wide.write && !base.write)
        return "writable";
    if (wide.read && !base.read)
        return "readable";
    return "mappable as executable code (allowed_bins lets read-only paths be)";
}

std::string kept(const PathAccess& base)
{
    if (!base.read)
        return "denies it";
    if (!base.write)
        return "keeps it read-only";
    return "refuses executable mappings there";
}

void check_paths(const Policy& base, const Policy& narrowed)
{
    for (const auto& point : path_points({&base, &narrowed})) {
        const PathAccess& before = point.access[0];
        const PathAccess& after = point.access[1];
        if ((after.read && !before.read) || (after.write && !before.write) || (after.map_exec && !before.map_exec)) {
            std::string where = point.path.empty() ? "paths no rule names" : "\"" + point.path + "\"";
            widens("policy." + after.decided_by, "makes " + where + " " + gained(after, before) +
                                                     ", where the locked default (policy." + before.decided_by + ") " +
                                                     kept(before) + ": this");
        }
    }
}

// Names are compared as names (what they will resolve to is the gate's
// business, answer by answer): the base's names covering this one must allow
// every port of it.
bool name_allowed(const std::vector<HostRule>& base, const HostRule& rule)
{
    std::vector<PortRange> ports;
    for (const auto& allowed : base) {
        if (!allowed.network && host_pattern_covers(allowed.host_name, rule.host_name))
            ports.push_back(allowed.ports);
    }
    auto merged = merge_port_ranges(std::move(ports));
    return std::any_of(merged.begin(), merged.end(), [&](const PortRange& range) {
        return range.first <= rule.ports.first && rule.ports.last <= range.last;
    });
}

} // namespace

void check_hosts_narrowed(const Policy& base, const Policy& annotation)
{
    if (!base.allowed_hosts || !annotation.allowed_hosts)
        return;
    HostIndex allowed(*base.allowed_hosts);
    for (size_t i = 0; i < annotation.allowed_hosts->size(); ++i) {
        const auto& rule = (*annotation.allowed_hosts)[i];
        if (rule.network ? !allowed.allows(*rule.network, {rule.ports}) : !name_allowed(*base.allowed_hosts, rule))
            widens("policy.allowed_hosts[" + std::to_string(i) + "]", "\"" + rule.text + "\"");
    }
}

void check_ask_hosts_narrowed(const Policy& base, const Policy& annotation)
{
    if (!annotation.ask_hosts || !base.allowed_hosts)
        return; // a default that restricts no host: asking narrows it
    std::vector<HostRule> wider = *base.allowed_hosts;
    if (base.ask_hosts)
        wider.insert(wider.end(), base.ask_hosts->names.begin(), base.ask_hosts->names.end());
    for (size_t i = 0; i < annotation.ask_hosts->names.size(); ++i) {
        const auto& rule = annotation.ask_hosts->names[i];
        if (!name_allowed(wider, rule))
            widens("policy.ask_hosts.names[" + std::to_string(i) + "]", "\"" + rule.text + "\"");
    }
}

void check_bins_narrowed(const Policy& base, const Policy& annotation)
{
    if (!base.allowed_bins || !annotation.allowed_bins)
        return;
    for (size_t i = 0; i < annotation.allowed_bins->size(); ++i) {
        const auto& bin = (*annotation.allowed_bins)[i];
        if (std::find(base.allowed_bins->begin(), base.allowed_bins->end(), bin) == base.allowed_bins->end())
            widens("policy.allowed_bins[" + std::to_string(i) + "]", "\"" + bin + "\"");
    }
}

// Each allow pattern within the default's allow patterns; each ask pattern
// within its allow or ask patterns (asking is narrower than allowing, wider
// than denying: any deny pattern is fine).
void check_commands_narrowed(const Policy& base, const Policy& annotation)
{
    auto check = [](const std::vector<std::string>& patterns, const std::string& field,
                    std::initializer_list<const std::vector<std::string>*> wider) {
        for (size_t i = 0; i < patterns.size(); ++i) {
            bool covered = std::any_of(wider.begin(), wider.end(), [&](const std::vector<std::string>* list) {
                return std::any_of(list->begin(), list->end(),
                                   [&](const std::string& wide) { return pattern_covers(wide, patterns[i]); });
            });
            if (!covered)
                widens(entry_field(field, i), json_quoted(patterns[i]));
        }
    };
    for (const auto& [tool, rule] : annotation.commands) {
        std::string field = "policy.commands." + tool;
        auto it = base.commands.find(tool);
        if (it == base.commands.end())
            widens(field, "a tool the locked default does not broker");
        check(rule.allow, field + ".allow", {&it->second.allow});
        check(rule.ask, field + ".ask", {&it->second.allow, &it->second.ask});
    }
}

Policy narrow_policy(const Policy& base, const Policy& annotation)
{
    if (base.mode == Mode::enforce && annotation.mode == Mode::audit)
        widens("policy.mode", "\"audit\"");
    for (const auto& list : rule_lists())
        if (list.check_narrowed)
            list.check_narrowed(base, annotation);
    if (annotation.enforcement != Enforcement::automatic && annotation.enforcement < base.enforcement)
        widens("policy.enforcement", std::string("\"") + enforcement_name(annotation.enforcement) + "\"");
    Policy narrowed = combined(base, annotation);
    narrowed.enforcement = std::max(annotation.enforcement, base.enforcement);
    check_paths(base, narrowed);
    return narrowed;
}

} // namespace cerberus::policy
