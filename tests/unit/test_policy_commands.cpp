// SPDX-License-Identifier: Apache-2.0
// The policy's commands: argument patterns matched word by word, deny winning,
// validation naming the entry, and --lock-policy narrowing. Every denial has
// an allowed control beside it.
#include "base/error.hpp"
#include "policy/policy.hpp"
#include "policy/policy_commands.hpp"

#include <doctest/doctest.h>

using namespace cerberus;
using namespace cerberus::policy;

namespace {

const char* git_policy = R"({"commands": {"git": {
    "allow": ["status", "--version", "diff *", "push origin feature/*", "log * --oneline"],
    "deny": ["push --force *", "push * main"]}}})";

CommandDecision decide(const std::string& document, const std::string& tool, std::vector<std::string> args)
{
    return decide_command(parse_policy(document).commands, tool, args);
}

std::string parse_error(const std::string& document)
{
    try {
        parse_policy(document);
    } catch (const Error& e) {
        return e.what();
    }
    return "accepted";
}

std::string narrow_error(const std::string& base, const std::string& annotation)
{
    try {
        narrow_policy(parse_policy(base), parse_policy(annotation));
    } catch (const Error& e) {
        CHECK(e.errnum() == EPERM);
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST_CASE("commands: a word, one word, a prefix word and the rest")
{
    CHECK(decide(git_policy, "git", {"status"}).allowed);
    CHECK_FALSE(decide(git_policy, "git", {"status", "--short"}).allowed); // "status" is that word alone
    CHECK(decide(git_policy, "git", {"diff"}).allowed);                    // the rest may be nothing
    CHECK(decide(git_policy, "git", {"diff", "HEAD", "--", "a.c"}).allowed);
    CHECK(decide(git_policy, "git", {"push", "origin", "feature/x"}).allowed);
    CHECK_FALSE(decide(git_policy, "git", {"push", "origin", "fix/x"}).allowed);
    CHECK_FALSE(decide(git_policy, "git", {"push", "origin", "feature/x", "--tags"}).allowed);
    CHECK(decide(git_policy, "git", {"log", "main", "--oneline"}).allowed); // a middle "*" is one word
    CHECK_FALSE(decide(git_policy, "git", {"log", "--oneline"}).allowed);
    CHECK_FALSE(decide(git_policy, "git", {"log", "a", "b", "--oneline"}).allowed);
    CHECK_FALSE(decide(git_policy, "git", {}).allowed);
}

TEST_CASE("commands: deny wins, unlisted calls and tools are denied, the rule is named")
{
    auto forced = decide(git_policy, "git", {"push", "--force", "origin", "main"});
    CHECK_FALSE(forced.allowed);
    CHECK(forced.rule == R"(commands.git.deny[0] "push --force *")");
    auto to_main = decide(R"({"commands": {"git": {"allow": ["push *"], "deny": ["push * main"]}}})", "git",
                          {"push", "origin", "main"});
    CHECK_FALSE(to_main.allowed);
    CHECK(to_main.rule == R"(commands.git.deny[0] "push * main")");
    // control: the same allow pattern, the branch not main
    auto to_feature = decide(R"({"commands": {"git": {"allow": ["push *"], "deny": ["push * main"]}}})", "git",
                             {"push", "origin", "feature/a"});
    CHECK(to_feature.allowed);
    CHECK(to_feature.rule == R"(commands.git.allow[0] "push *")");
    CHECK(decide(git_policy, "git", {"fetch"}).rule == "not in commands.git.allow");
    CHECK(decide(git_policy, "kubectl", {"get", "pods"}).rule == "not in commands");
    CHECK_FALSE(decide("{}", "git", {"status"}).allowed);
    // a tool listed with no allow pattern runs nothing
    CHECK_FALSE(decide(R"({"commands": {"git": {"allow": []}}})", "git", {}).allowed);
    CHECK(decide(R"({"commands": {"git": {"allow": [""]}}})", "git", {}).allowed); // "" is no argument
}

TEST_CASE("commands: validated at parse, errors naming the entry")
{
    CHECK(parse_error(git_policy) == "accepted");
    CHECK(parse_error(R"({"commands": ["git"]})").starts_with("policy.commands: expected an object"));
    CHECK(parse_error(R"({"commands": {"../git": {"allow": []}}})").starts_with("policy.commands.../git: tool name"));
    CHECK(parse_error(R"({"commands": {"usr/bin/git": {"allow": []}}})").starts_with("policy.commands.usr/bin/git"));
    CHECK(parse_error(R"({"commands": {"git": {"allow": ["st*tus"]}}})")
              .starts_with(R"(policy.commands.git.allow[0]: "st*tus": a "*" stands for a whole word)"));
    CHECK(parse_error(R"({"commands": {"git": {"deny": [7]}}})")
              .starts_with("policy.commands.git.deny[0]: expected a string"));
    CHECK(parse_error(R"({"commands": {"git": {"alow": []}}})").starts_with("policy.commands.git: unknown field"));
    CHECK(parse_error(R"({"commands": {"git": ["status"]}})").starts_with("policy.commands.git: expected an object"));
    // spacing is not meaning: patterns are kept with single spaces
    CHECK(parse_policy(R"({"commands": {"git": {"allow": ["  push   origin  x "]}}})").commands.at("git").allow[0] ==
          "push origin x");
}

TEST_CASE("commands: pattern coverage, a narrower pattern under a wider one only")
{
    CHECK(pattern_covers("push *", "push origin feature/*"));
    CHECK(pattern_covers("push * *", "push origin feature/*"));
    CHECK(pattern_covers("push origin feature/*", "push origin feature/a*"));
    CHECK(pattern_covers("status", "status"));
    CHECK_FALSE(pattern_covers("push origin feature/*", "push origin *"));
    CHECK_FALSE(pattern_covers("push origin", "push origin *")); // the rest is more than no word
    CHECK_FALSE(pattern_covers("push * main", "push *"));
    CHECK_FALSE(pattern_covers("status", "status *"));
    CHECK(pattern_covers("*", ""));
    CHECK(pattern_covers("push origin *", "push origin"));
}

TEST_CASE("commands: --lock-policy, a default's denial cannot be widened")
{
    const char* base = R"({"commands": {"git": {"allow": ["push *", "status"], "deny": ["push --force *"]}}})";
    // The annotation's own allow pattern, without the default's denial: the denial stays.
    Policy narrowed = narrow_policy(parse_policy(base), parse_policy(R"({"commands": {"git": {"allow": ["push *"]}}})"));
    CHECK_FALSE(decide_command(narrowed.commands, "git", {"push", "--force", "origin", "main"}).allowed);
    CHECK(decide_command(narrowed.commands, "git", {"push", "origin", "feature/a"}).allowed); // control
    CHECK_FALSE(decide_command(narrowed.commands, "git", {"status"}).allowed); // the annotation left it out
    // Widening: a tool, or an allow pattern, the default does not cover.
    CHECK(narrow_error(base, R"({"commands": {"kubectl": {"allow": ["get *"]}}})") ==
          "policy.commands.kubectl: a tool the locked default does not broker widens the locked default policy");
    CHECK(narrow_error(base, R"({"commands": {"git": {"allow": ["status", "fetch *"]}}})") ==
          "policy.commands.git.allow[1]: \"fetch *\" widens the locked default policy");
    CHECK(narrow_error(base, R"({"commands": {"git": {"allow": ["status", "push origin *"]}}})") == "accepted");
    // A default without commands brokers nothing: an annotation cannot add a tool.
    CHECK(narrow_error("{}", R"({"commands": {"git": {"allow": ["status"]}}})").starts_with("policy.commands.git"));
    CHECK(narrow_error("{}", "{}") == "accepted");
    // The annotation without commands keeps the default's.
    CHECK(narrow_policy(parse_policy(base), parse_policy("{}")).commands == parse_policy(base).commands);
}

TEST_CASE("commands: ask comes after deny and allow; no match is still denied")
{
    const char* asking = R"({"commands": {"git": {"allow": ["status", "push origin feature/*"],
        "ask": ["push origin *", "status"], "deny": ["push origin main"], "ask_timeout": "2s"}}})";
    auto asked = decide(asking, "git", {"push", "origin", "fix/x"});
    CHECK(asked.ask);
    CHECK_FALSE(asked.allowed);
    CHECK(asked.rule == R"(commands.git.ask[0] "push origin *")");
    auto allowed = decide(asking, "git", {"push", "origin", "feature/x"}); // allow before ask
    CHECK(allowed.allowed);
    CHECK_FALSE(allowed.ask);
    CHECK(decide(asking, "git", {"status"}).allowed); // listed in both: allowed
    auto denied = decide(asking, "git", {"push", "origin", "main"}); // deny before ask
    CHECK_FALSE(denied.allowed);
    CHECK_FALSE(denied.ask);
    CHECK(denied.rule == R"(commands.git.deny[0] "push origin main")");
    auto unmatched = decide(asking, "git", {"fetch"});
    CHECK_FALSE(unmatched.allowed);
    CHECK_FALSE(unmatched.ask);
    CHECK(unmatched.rule == "not in commands.git.allow");
    const auto& rule = parse_policy(asking).commands.at("git");
    CHECK(ask_timeout_of(rule) == std::chrono::seconds(2));
    CHECK(ask_timeout_of(parse_policy(git_policy).commands.at("git")) == std::chrono::seconds(60)); // the default
    // written back as read
    auto written = write_commands(parse_policy(asking));
    CHECK(written["git"]["ask"] == nlohmann::json::array({"push origin *", "status"}));
    CHECK(written["git"]["ask_timeout"] == "2s");
    CHECK(parse_policy(R"({"commands": )" + written.dump() + "}").commands == parse_policy(asking).commands);
}

TEST_CASE("commands: ask_timeout validated, naming the field")
{
    CHECK(parse_error(R"({"commands": {"git": {"ask": ["push *"], "ask_timeout": "10m"}}})") == "accepted");
    CHECK(parse_error(R"({"commands": {"git": {"ask": ["push *"], "ask_timeout": "soon"}}})")
              .starts_with(R"(policy.commands.git.ask_timeout: "soon": a duration of at most 24h)"));
    CHECK(parse_error(R"({"commands": {"git": {"ask": ["push *"], "ask_timeout": "0s"}}})")
              .starts_with("policy.commands.git.ask_timeout:"));
    CHECK(parse_error(R"({"commands": {"git": {"ask": ["push *"], "ask_timeout": "25h"}}})")
              .starts_with("policy.commands.git.ask_timeout:"));
    CHECK(parse_error(R"({"commands": {"git": {"ask": ["push *"], "ask_timeout": 60}}})")
              .starts_with("policy.commands.git.ask_timeout: expected a duration"));
    CHECK(parse_error(R"({"commands": {"git": {"allow": ["push *"], "ask_timeout": "5s"}}})")
              .starts_with("policy.commands.git.ask_timeout: a timeout for asks, and the tool has no"));
    CHECK(parse_error(R"({"commands": {"git": {"ask": ["st*tus"]}}})")
              .starts_with(R"(policy.commands.git.ask[0]: "st*tus")"));
}

TEST_CASE("commands: --lock-policy, ask is narrower than allow and wider than deny")
{
    const char* base = R"({"commands": {"git": {"allow": ["status"], "ask": ["push origin *"], "deny": ["push --force *"]}}})";
    // asking what the default allows or asks: narrower
    CHECK(narrow_error(base, R"({"commands": {"git": {"ask": ["status", "push origin feature/*"]}}})") == "accepted");
    // allowing what the default only asks: wider
    CHECK(narrow_error(base, R"({"commands": {"git": {"allow": ["push origin feature/*"]}}})") ==
          "policy.commands.git.allow[0]: \"push origin feature/*\" widens the locked default policy");
    // asking what the default denies or leaves out: wider
    CHECK(narrow_error(base, R"({"commands": {"git": {"ask": ["fetch *"]}}})") ==
          "policy.commands.git.ask[0]: \"fetch *\" widens the locked default policy");
    // denying what the default asks: fine, and the default's denials stay
    Policy narrowed = narrow_policy(parse_policy(base),
                                    parse_policy(R"({"commands": {"git": {"ask": ["push origin *"], "deny": ["push origin main"]}}})"));
    CHECK_FALSE(decide_command(narrowed.commands, "git", {"push", "origin", "main"}).ask);
    CHECK(decide_command(narrowed.commands, "git", {"push", "origin", "x"}).ask);
    // the default's timeout when the annotation names none
    CHECK(narrow_policy(parse_policy(R"({"commands": {"git": {"ask": ["*"], "ask_timeout": "5s"}}})"),
                        parse_policy(R"({"commands": {"git": {"ask": ["status"]}}})"))
              .commands.at("git")
              .ask_timeout == std::chrono::seconds(5));
}
