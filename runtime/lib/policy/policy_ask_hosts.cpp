// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_ask_hosts.hpp"

#include "base/duration.hpp"
#include "policy/policy_commands.hpp"
#include "policy/policy_document.hpp"
#include "policy/policy_json.hpp"

#include <algorithm>

namespace cerberus::policy {
namespace {

using nlohmann::json;

constexpr auto longest_ask_timeout = std::chrono::hours(24);

} // namespace

std::chrono::milliseconds ask_timeout_of(const AskHosts& ask_hosts)
{
    return ask_hosts.ask_timeout.value_or(default_ask_timeout);
}

std::chrono::milliseconds parse_ask_timeout(const json& value, const std::string& field)
{
    expect(value, json::value_t::string, "a duration (\"60s\", \"10m\")", field);
    auto duration = parse_duration(value.get<std::string>());
    if (!duration || *duration > longest_ask_timeout)
        invalid(field, json_quoted(value.get<std::string>()) +
                           ": a duration of at most 24h, a whole number and a unit (\"500ms\", \"60s\", \"10m\", \"1h\")");
    return *duration;
}

void parse_ask_hosts(const json& value, const std::string& field, Policy& policy)
{
    expect(value, json::value_t::object, "an object with \"names\" and, if need be, \"ask_timeout\"", field);
    AskHosts ask;
    for (const auto& item : value.items()) {
        const std::string& key = item.key(); // a named variable: clang before 16 captures no structured binding
        if (key == "ask_timeout") {
            ask.ask_timeout = parse_ask_timeout(item.value(), field + ".ask_timeout");
            continue;
        }
        if (key != "names")
            invalid(field, "unknown field " + json_quoted(key) + " (expected \"names\" or \"ask_timeout\")");
        auto items = string_list(item.value(), field + ".names");
        for (size_t i = 0; i < items.size(); ++i) {
            std::string entry = entry_field(field + ".names", i);
            HostRule rule = parse_host_rule(items[i], entry);
            if (rule.network)
                invalid(entry, json_quoted(items[i]) +
                                   ": the DNS gate asks about host names only (an address is never looked up); "
                                   "list it in allowed_hosts");
            ask.names.push_back(std::move(rule));
        }
    }
    if (!value.contains("names"))
        invalid(field + ".names", "missing (the host names to ask about)");
    policy.ask_hosts = std::move(ask);
}

void check_ask_hosts_within(const Policy& policy)
{
    if (policy.ask_hosts && !policy.ask_hosts->names.empty() && !policy.allowed_hosts)
        invalid("policy.ask_hosts", "asks only where allowed_hosts restricts hosts (without it every name "
                                    "resolves unasked): add allowed_hosts");
}

nlohmann::ordered_json write_ask_hosts(const Policy& policy)
{
    std::vector<std::string> names;
    for (const auto& rule : policy.ask_hosts->names) {
        std::string text = host_rule_text(rule);
        if (std::find(names.begin(), names.end(), text) == names.end())
            names.push_back(text);
    }
    nlohmann::ordered_json out;
    out["names"] = names;
    if (policy.ask_hosts->ask_timeout)
        out["ask_timeout"] = duration_text(*policy.ask_hosts->ask_timeout);
    return out;
}

void combine_ask_hosts(const Policy& locked_default, const Policy& annotation, Policy& narrowed)
{
    if (!annotation.ask_hosts) {
        narrowed.ask_hosts = locked_default.ask_hosts;
        return;
    }
    if (!narrowed.ask_hosts->ask_timeout && locked_default.ask_hosts)
        narrowed.ask_hosts->ask_timeout = locked_default.ask_hosts->ask_timeout;
}

} // namespace cerberus::policy
