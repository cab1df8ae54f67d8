// SPDX-License-Identifier: Apache-2.0
// commands in learn mode: a brokered call is learned as the allow pattern of
// exactly it, for a tool the base lists, unless a deny pattern matched it
// (deny patterns only shrink); a call an ask held only when an operator
// answered "always".
#include "policy/learn_lists.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

namespace cerberus::policy {
namespace {

const std::string unspellable_call_rule = "an argument no pattern word spells (empty, with spaces or a \"*\")";

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

// Any other answer than "always" (denied, timed out, never answered) is the operator's to give again.
bool take_call(const Action& action, const std::string& rule, Learning& learning)
{
    if (action.op != "command")
        return false;
    if (allowed_for_now(action.answer))
        return true;
    bool refused = rule.starts_with("commands." + action.tool + ".deny") ||
                   (!action.answer.empty() && action.answer != "always");
    auto pattern = exact_pattern(action.args);
    if (refused || !learning.base.commands.count(action.tool) || !pattern)
        learning.keep_denied(action.op, action.target, pattern ? rule : unspellable_call_rule);
    else
        learning.calls[action.tool].insert(*pattern);
    return true;
}

void add_calls(Learning& learning)
{
    Learned& learned = learning.learned;
    for (const auto& [tool, patterns] : learning.calls) {
        auto& allow = learned.policy.commands[tool].allow;
        for (const auto& pattern : patterns) {
            if (std::find(allow.begin(), allow.end(), pattern) != allow.end())
                continue;
            allow.push_back(pattern);
            learned.added["commands." + tool + ".allow"].push_back(pattern);
        }
    }
}

} // namespace

// The broker decides on the pattern learned as the call itself: nothing to settle.
const LearnExtraction learn_commands = {.record = nullptr, .take = take_call, .add = add_calls, .settle = nullptr};

} // namespace cerberus::policy
