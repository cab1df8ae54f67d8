// SPDX-License-Identifier: Apache-2.0
#include "policy/rule_lists.hpp"

#include "base/error.hpp"
#include "cerberus_policy.h"
#include "policy/learn_lists.hpp"
#include "policy/policy_access.hpp"
#include "policy/policy_ask_hosts.hpp"
#include "policy/policy_commands.hpp"
#include "policy/policy_compile.hpp"
#include "policy/policy_document.hpp"
#include "policy/policy_http.hpp"
#include "policy/policy_json.hpp"
#include "policy/policy_narrow.hpp"
#include "process/capabilities.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <type_traits>

namespace cerberus::policy {
namespace {

using nlohmann::json;

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

// The list a member holds: an allow-list is optional (absent restricts
// nothing), a deny-list a plain vector (empty denies nothing).
template <auto member>
using ListOf = std::remove_cvref_t<decltype(std::declval<Policy>().*member)>;

template <auto member>
bool has_list(const Policy& policy)
{
    if constexpr (is_optional<ListOf<member>>::value)
        return (policy.*member).has_value();
    else
        return !(policy.*member).empty();
}

template <auto member>
std::vector<std::string>* path_entries(Policy& policy)
{
    auto& list = policy.*member;
    if constexpr (is_optional<ListOf<member>>::value)
        return list ? &*list : nullptr;
    else
        return &list;
}

template <auto member>
void parse_paths(const json& value, const std::string& field, Policy& policy)
{
    policy.*member = path_list(value, field);
}

template <auto member>
nlohmann::ordered_json write_strings(const Policy& policy)
{
    if constexpr (is_optional<ListOf<member>>::value)
        return *(policy.*member);
    else
        return policy.*member;
}

// The annotation's list when it has one, else the default's.
template <auto member>
void inherit_when_absent(const Policy& locked_default, const Policy& annotation, Policy& narrowed)
{
    if (!(annotation.*member))
        narrowed.*member = locked_default.*member;
}

// allowed_paths and read_only_paths decide together which paths may be
// reached: an annotation with either replaces both of the default's.
template <auto member>
void inherit_path_rules(const Policy& locked_default, const Policy& annotation, Policy& narrowed)
{
    if (!annotation.restricts_paths())
        narrowed.*member = locked_default.*member;
}

// Denials add up: the annotation's, then the default's it does not repeat.
template <auto member>
void unite(const Policy& locked_default, const Policy& annotation, Policy& narrowed)
{
    auto entries = annotation.*member;
    for (const auto& entry : locked_default.*member)
        if (std::find(entries.begin(), entries.end(), entry) == entries.end())
            entries.push_back(entry);
    if constexpr (std::is_same_v<ListOf<member>, std::vector<int>>)
        std::sort(entries.begin(), entries.end()); // capability numbers are kept sorted
    narrowed.*member = std::move(entries);
}

void parse_hosts(const json& value, const std::string& field, Policy& policy)
{
    std::vector<HostRule> rules;
    auto items = string_list(value, field);
    for (size_t i = 0; i < items.size(); ++i)
        rules.push_back(parse_host_rule(items[i], entry_field(field, i)));
    policy.allowed_hosts = std::move(rules);
}

// An entry written twice is written once.
nlohmann::ordered_json write_hosts(const Policy& policy)
{
    std::vector<std::string> hosts;
    for (const auto& rule : *policy.allowed_hosts) {
        std::string text = host_rule_text(rule);
        if (std::find(hosts.begin(), hosts.end(), text) == hosts.end())
            hosts.push_back(text);
    }
    return hosts;
}

void parse_bins(const json& value, const std::string& field, Policy& policy)
{
    policy.allowed_bins = path_list(value, field);
    for (size_t i = 0; i < policy.allowed_bins->size(); ++i) {
        const std::string& bin = (*policy.allowed_bins)[i];
        if (bin == "/")
            invalid(entry_field(field, i), "\"/\" is not a file");
        // Run directly, the loader maps and runs any file it is given.
        if (is_dynamic_loader(bin))
            invalid(entry_field(field, i), json_quoted(bin) + " is the dynamic loader, which would run any file; "
                                                              "dynamically linked programs run without listing it");
    }
}

void parse_caps(const json& value, const std::string& field, Policy& policy)
{
    std::set<int> caps;
    auto names = string_list(value, field);
    for (size_t i = 0; i < names.size(); ++i) {
        auto number = capability_number(names[i]);
        if (!number)
            invalid(entry_field(field, i), "unknown capability " + json_quoted(names[i]));
        caps.insert(*number);
    }
    policy.forbidden_caps = {caps.begin(), caps.end()};
}

nlohmann::ordered_json write_caps(const Policy& policy)
{
    std::vector<std::string> caps;
    for (int cap : policy.forbidden_caps)
        caps.emplace_back(capabilities::capability_name(cap));
    return caps;
}

constexpr RuleKind host_rows[] = {RuleKind::allowed_hosts, RuleKind::raw_sockets};
constexpr RuleKind path_rows[] = {RuleKind::paths, RuleKind::path_changes, RuleKind::unix_sockets};
constexpr RuleKind denied_rows[] = {RuleKind::denied_paths};
constexpr RuleKind bin_rows[] = {RuleKind::allowed_bins, RuleKind::exec_mappings};
constexpr RuleKind cap_rows[] = {RuleKind::forbidden_caps};

constexpr RuleList table[] = {
    {.name = "allowed_hosts",
     .label = "hosts",
     .role = ListRole::allow_list,
     .denial = DenialWording::not_listed,
     .present = has_list<&Policy::allowed_hosts>,
     .parse = parse_hosts,
     .check_within = nullptr,
     .write = write_hosts,
     .enforced_inside = false,
     .check_narrowed = check_hosts_narrowed,
     .combine = inherit_when_absent<&Policy::allowed_hosts>,
     .paths = nullptr,
     .coverage = host_rows,
     .policy_flag = CERB_HAS_HOSTS,
     .path_kind = 0,
     .exact_files = false,
     .compile = compile_host_rules,
     .trail_rule = CERB_RULE_NOT_IN_ALLOWED_HOSTS,
     .learn = &learn_allowed_hosts},
    {.name = "allowed_paths",
     .label = "rw",
     .role = ListRole::allow_list,
     .denial = DenialWording::not_listed,
     .present = has_list<&Policy::allowed_paths>,
     .parse = parse_paths<&Policy::allowed_paths>,
     .check_within = nullptr,
     .write = write_strings<&Policy::allowed_paths>,
     .enforced_inside = true,
     .check_narrowed = nullptr,
     .combine = inherit_path_rules<&Policy::allowed_paths>,
     .paths = path_entries<&Policy::allowed_paths>,
     .coverage = path_rows,
     .policy_flag = CERB_HAS_PATHS,
     .path_kind = CERB_PATH_ALLOW,
     .exact_files = false,
     .compile = nullptr,
     .trail_rule = CERB_RULE_NOT_IN_ALLOWED_PATHS,
     .learn = &learn_allowed_paths},
    {.name = "read_only_paths",
     .label = "ro",
     .role = ListRole::allow_list,
     .denial = DenialWording::by_entry,
     .present = has_list<&Policy::read_only_paths>,
     .parse = parse_paths<&Policy::read_only_paths>,
     .check_within = nullptr,
     .write = write_strings<&Policy::read_only_paths>,
     .enforced_inside = true,
     .check_narrowed = nullptr,
     .combine = inherit_path_rules<&Policy::read_only_paths>,
     .paths = path_entries<&Policy::read_only_paths>,
     .coverage = path_rows,
     .policy_flag = CERB_HAS_PATHS,
     .path_kind = CERB_PATH_READ_ONLY,
     .exact_files = false,
     .compile = nullptr,
     .trail_rule = CERB_RULE_READ_ONLY_PATH,
     .learn = &learn_read_only_paths},
    {.name = "denied_paths",
     .label = "denied",
     .role = ListRole::deny_list,
     .denial = DenialWording::by_entry,
     .present = has_list<&Policy::denied_paths>,
     .parse = parse_paths<&Policy::denied_paths>,
     .check_within = nullptr,
     .write = write_strings<&Policy::denied_paths>,
     .enforced_inside = true,
     .check_narrowed = nullptr,
     .combine = unite<&Policy::denied_paths>,
     .paths = path_entries<&Policy::denied_paths>,
     .coverage = denied_rows,
     .policy_flag = CERB_HAS_DENIED,
     .path_kind = CERB_PATH_DENY,
     .exact_files = false,
     .compile = nullptr,
     .trail_rule = CERB_RULE_DENIED_PATH,
     .learn = nullptr},
    {.name = "allowed_bins",
     .label = "bins",
     .role = ListRole::allow_list,
     .denial = DenialWording::not_listed,
     .present = has_list<&Policy::allowed_bins>,
     .parse = parse_bins,
     .check_within = check_bins_read_only,
     .write = write_strings<&Policy::allowed_bins>,
     .enforced_inside = true,
     .check_narrowed = check_bins_narrowed,
     .combine = inherit_when_absent<&Policy::allowed_bins>,
     .paths = path_entries<&Policy::allowed_bins>,
     .coverage = bin_rows,
     .policy_flag = CERB_HAS_BINS,
     .path_kind = CERB_PATH_BIN,
     .exact_files = true,
     .compile = nullptr,
     .trail_rule = CERB_RULE_NOT_IN_ALLOWED_BINS,
     .learn = &learn_allowed_bins},
    {.name = "forbidden_caps",
     .label = "caps",
     .role = ListRole::deny_list,
     .denial = DenialWording::by_entry,
     .present = has_list<&Policy::forbidden_caps>,
     .parse = parse_caps,
     .check_within = nullptr,
     .write = write_caps,
     .enforced_inside = true,
     .check_narrowed = nullptr,
     .combine = unite<&Policy::forbidden_caps>,
     .paths = nullptr,
     .coverage = cap_rows,
     .policy_flag = 0, // the capability mask itself says it
     .path_kind = 0,
     .exact_files = false,
     .compile = compile_forbidden_caps,
     .trail_rule = CERB_RULE_FORBIDDEN_CAP,
     .learn = nullptr},
    // Carried out by the command broker outside the kernel (broker/): no row, flag, map entry nor kernel rule.
    {.name = "commands",
     .label = "cmds",
     .role = ListRole::grant,
     .denial = DenialWording::by_entry,
     .present = has_list<&Policy::commands>,
     .parse = parse_commands,
     .check_within = nullptr,
     .write = write_commands,
     .enforced_inside = false,
     .check_narrowed = check_commands_narrowed,
     .combine = combine_commands,
     .paths = nullptr,
     .coverage = {},
     .policy_flag = 0,
     .path_kind = 0,
     .exact_files = false,
     .compile = nullptr,
     .trail_rule = 0,
     .learn = &learn_commands},
    // Held by the DNS gate outside the kernel (dns/): what it admits for an approved name is allowed_hosts'.
    {.name = "ask_hosts",
     .label = "ask",
     .role = ListRole::grant,
     .denial = DenialWording::not_listed,
     .present = has_list<&Policy::ask_hosts>,
     .parse = parse_ask_hosts,
     .check_within = check_ask_hosts_within,
     .write = write_ask_hosts,
     .enforced_inside = false,
     .check_narrowed = check_ask_hosts_narrowed,
     .combine = combine_ask_hosts,
     .paths = nullptr,
     .coverage = {},
     .policy_flag = 0,
     .path_kind = 0,
     .exact_files = false,
     .compile = nullptr,
     .trail_rule = 0,
     .learn = nullptr},
    // Carried out by the egress proxy on the host (egress/, hosted by the DNS gate): the gate admits its
    // hosts' addresses for the proxy only, and check_within keeps them out of allowed_hosts.
    {.name = "allowed_http",
     .label = "http",
     .role = ListRole::grant,
     .denial = DenialWording::by_entry,
     .present = has_list<&Policy::allowed_http>,
     .parse = parse_http_rules,
     .check_within = check_http_within,
     .write = write_http_rules,
     .enforced_inside = false,
     .check_narrowed = check_http_narrowed,
     .combine = combine_http_rules,
     .paths = nullptr,
     .coverage = {},
     .policy_flag = 0,
     .path_kind = 0,
     .exact_files = false,
     .compile = nullptr,
     .trail_rule = 0,
     .learn = &learn_allowed_http},
};

} // namespace

const std::vector<std::string>* RuleList::paths_in(const Policy& policy) const
{
    // paths only finds the list; nothing is written through it here.
    return paths ? paths(const_cast<Policy&>(policy)) : nullptr;
}

std::string RuleList::denial_rule(const std::string& entry) const
{
    return denial == DenialWording::not_listed ? std::string("not in ") + name : std::string(name) + " " + entry;
}

std::span<const RuleList> rule_lists()
{
    return table;
}

const RuleList* find_rule_list(std::string_view name)
{
    for (const auto& list : table)
        if (name == list.name)
            return &list;
    return nullptr;
}

const RuleList& rule_list(std::string_view name)
{
    if (const RuleList* list = find_rule_list(name))
        return *list;
    throw Error("no rule list is named \"" + std::string(name) + "\"", EINVAL);
}

} // namespace cerberus::policy
