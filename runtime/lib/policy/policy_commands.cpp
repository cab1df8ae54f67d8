// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_commands.hpp"

#include "base/duration.hpp"
#include "base/error.hpp"
#include "policy/policy_ask_hosts.hpp"
#include "policy/policy_json.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <sstream>

namespace cerberus::policy {
namespace {

using nlohmann::json;

std::vector<std::string> words_of(const std::string& pattern)
{
    std::vector<std::string> words;
    std::istringstream in(pattern);
    for (std::string word; in >> word;)
        words.push_back(word);
    return words;
}

bool is_rest(const std::vector<std::string>& words, size_t i)
{
    return i + 1 == words.size() && words[i] == "*";
}

// One pattern word against one argument: "*", "prefix*" or the word itself.
bool word_matches(const std::string& word, const std::string& arg)
{
    if (word == "*")
        return true;
    if (word.back() == '*')
        return arg.starts_with(std::string_view(word).substr(0, word.size() - 1));
    return word == arg;
}

bool matches(const std::vector<std::string>& words, const std::vector<std::string>& args)
{
    for (size_t i = 0; i < words.size(); ++i) {
        if (is_rest(words, i))
            return true;
        if (i >= args.size() || !word_matches(words[i], args[i]))
            return false;
    }
    return words.size() == args.size();
}

// Whether every word pattern matches, wide does: a literal only by itself or a
// prefix it has, a prefix by a shorter one, "*" by "*".
bool word_covers(const std::string& wide, const std::string& word)
{
    if (wide == "*")
        return true;
    if (word == "*")
        return false;
    if (wide.back() != '*')
        return wide == word;
    return word.starts_with(std::string_view(wide).substr(0, wide.size() - 1));
}

std::string normal_pattern(const std::string& text, const std::string& field)
{
    auto words = words_of(text);
    for (size_t i = 0; i < words.size(); ++i) {
        size_t star = words[i].find('*');
        if (star != std::string::npos && star + 1 != words[i].size())
            invalid(field, json_quoted(text) + ": a \"*\" stands for a whole word or ends one (\"feature/*\")");
    }
    std::string normal;
    for (const auto& word : words)
        normal += (normal.empty() ? "" : " ") + word;
    return normal;
}

std::vector<std::string> patterns(const json& value, const std::string& field)
{
    auto list = string_list(value, field);
    for (size_t i = 0; i < list.size(); ++i)
        list[i] = normal_pattern(list[i], entry_field(field, i));
    return list;
}

// A tool's outcome lists, in the order they decide (deny wins, then allow, then
// ask): the one place each is named, read, written and matched.
struct OutcomeList {
    const char* key;
    std::vector<std::string> CommandRule::*patterns;
};
constexpr OutcomeList outcome_lists[] = {
    {"deny", &CommandRule::deny}, {"allow", &CommandRule::allow}, {"ask", &CommandRule::ask}};

CommandRule parse_rule(const json& value, const std::string& field)
{
    expect(value, json::value_t::object, "an object with \"allow\", \"ask\" and \"deny\"", field);
    CommandRule rule;
    for (const auto& item : value.items()) {
        const std::string& key = item.key(); // a named variable: clang before 16 captures no structured binding
        const json& list = item.value();
        auto outcome = std::find_if(std::begin(outcome_lists), std::end(outcome_lists),
                                    [&](const OutcomeList& o) { return key == o.key; });
        if (outcome != std::end(outcome_lists))
            rule.*(outcome->patterns) = patterns(list, field + "." + key);
        else if (key == "ask_timeout")
            rule.ask_timeout = parse_ask_timeout(list, field + "." + key);
        else
            invalid(field, "unknown field " + json_quoted(key) +
                               " (expected \"allow\", \"ask\", \"deny\" or \"ask_timeout\")");
    }
    if (rule.ask_timeout && rule.ask.empty())
        invalid(field + ".ask_timeout", "a timeout for asks, and the tool has no \"ask\" patterns");
    return rule;
}

} // namespace

bool valid_tool_name(const std::string& name)
{
    if (name.empty() || name.size() > 64 || name[0] == '.')
        return false;
    return std::all_of(name.begin(), name.end(), [](unsigned char c) {
        return std::isalnum(c) || c == '.' || c == '+' || c == '_' || c == '-';
    });
}

bool pattern_covers(const std::string& wide, const std::string& pattern)
{
    auto outer = words_of(wide);
    auto inner = words_of(pattern);
    for (size_t i = 0; i < outer.size(); ++i) {
        if (is_rest(outer, i))
            return true;
        if (i >= inner.size() || is_rest(inner, i) || !word_covers(outer[i], inner[i]))
            return false;
    }
    return outer.size() == inner.size();
}

CommandDecision decide_command(const Commands& commands, const std::string& tool,
                               const std::vector<std::string>& args)
{
    auto it = commands.find(tool);
    if (it == commands.end())
        return {false, false, "not in commands"};
    std::string field = "commands." + tool;
    for (const auto& outcome : outcome_lists) {
        const auto& list = it->second.*(outcome.patterns);
        for (size_t i = 0; i < list.size(); ++i)
            if (matches(words_of(list[i]), args)) {
                std::string key = outcome.key;
                return {key == "allow", key == "ask",
                        entry_field(field + "." + key, i) + " " + json_quoted(list[i])};
            }
    }
    return {false, false, "not in " + field + ".allow"};
}

std::chrono::milliseconds ask_timeout_of(const CommandRule& rule)
{
    return rule.ask_timeout.value_or(default_ask_timeout);
}

void parse_commands(const json& value, const std::string& field, Policy& policy)
{
    expect(value, json::value_t::object, "an object (tool name -> {\"allow\": [...], \"ask\": [...], \"deny\": [...]})", field);
    Commands commands;
    for (const auto& [tool, rule] : value.items()) {
        std::string entry = field + "." + tool;
        if (!valid_tool_name(tool))
            invalid(entry, "tool name " + json_quoted(tool) +
                               " is not a program's name (letters, digits, \".+_-\", no \"/\", at most 64)");
        commands[tool] = parse_rule(rule, entry);
    }
    policy.commands = std::move(commands);
}

nlohmann::ordered_json write_commands(const Policy& policy)
{
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [tool, rule] : policy.commands) {
        nlohmann::ordered_json entry;
        entry["allow"] = rule.allow; // an empty allow is written: documents have always held it
        for (const auto& outcome : outcome_lists)
            if (const auto& list = rule.*(outcome.patterns); !list.empty())
                entry[outcome.key] = list;
        if (rule.ask_timeout)
            entry["ask_timeout"] = duration_text(*rule.ask_timeout);
        out[tool] = std::move(entry);
    }
    return out;
}

// The annotation's tools (none of the default's it leaves out), each with the
// default's denials added to its own.
void combine_commands(const Policy& base, const Policy& annotation, Policy& narrowed)
{
    if (annotation.commands.empty()) {
        narrowed.commands = base.commands;
        return;
    }
    narrowed.commands = annotation.commands;
    for (auto& [tool, rule] : narrowed.commands) {
        auto it = base.commands.find(tool);
        if (it == base.commands.end())
            continue;
        if (!rule.ask_timeout)
            rule.ask_timeout = it->second.ask_timeout;
        for (const auto& denied : it->second.deny)
            if (std::find(rule.deny.begin(), rule.deny.end(), denied) == rule.deny.end())
                rule.deny.push_back(denied);
    }
}

} // namespace cerberus::policy
