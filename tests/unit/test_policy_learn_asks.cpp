// SPDX-License-Identifier: Apache-2.0
// Learn mode over a trail with asks: an operator's "always" becomes a rule;
// once, for a while, a grant's use and every refusal leave the policy asking.
#include "policy/policy.hpp"
#include "policy/policy_commands.hpp"
#include "policy/policy_records.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

using namespace cerberus::policy;
using nlohmann::json;

namespace {

const char* asking = R"({"allowed_hosts": ["allowed.example:443"],
    "ask_hosts": {"names": ["pypi.org:443", "*.example.net:80"]},
    "commands": {"git": {"allow": ["status"], "ask": ["push *"]}}})";

json asked_call(const std::string& branch, const std::string& verdict, const std::string& answer)
{
    return {{"type", "command"},
            {"tool", "git"},
            {"args", {"push", "origin", branch}},
            {"cwd", "/"},
            {"verdict", verdict},
            {"rule", R"(commands.git.ask[0] "push *"; ask 0a1b2c3d )" + answer},
            {"backend", "static"},
            {"answer", answer},
            {"duration_ms", 3}};
}

json asked_name(const std::string& name, const std::string& verdict, const std::string& answer)
{
    return {{"type", "dns"}, {"name", name}, {"qtype", "A"}, {"verdict", verdict},
            {"rule", "ask_hosts; ask 4e5f6a7b " + answer}, {"answer", answer}, {"answered_by", 0}};
}

} // namespace

TEST_CASE("learn: an asked call or name answered \"always\" becomes a rule; once, for a while, a grant or a refusal "
          "does not")
{
    std::vector<json> records{json::parse(std::string(R"({"type":"start","enforcement":"landlock","policy":)") +
                                          asking + "}")};
    records.push_back(asked_call("always", "allowed", "always"));
    records.push_back(asked_call("once", "allowed", "once"));
    records.push_back(asked_call("lasting", "allowed", "for 10m"));
    records.push_back(asked_call("granted", "allowed", "grant 9c8d7e6f"));
    records.push_back(asked_call("refused", "denied", "deny"));
    records.push_back(asked_call("unanswered", "denied", "timeout"));
    records.push_back(asked_name("pypi.org", "allowed", "always"));
    records.push_back(asked_name("a.example.net", "allowed", "once"));
    records.push_back(asked_name("b.example.net", "refused", "deny"));
    auto doc = learn_from_records(records, "t.jsonl", std::nullopt, "now");
    CHECK(doc["_learned"]["added"] ==
          json::parse(R"({"allowed_hosts": ["pypi.org:443"], "commands.git.allow": ["push origin always"]})"));

    Policy learned = parse_policy(doc.dump());
    CHECK(decide_command(learned.commands, "git", {"push", "origin", "always"}).allowed);
    for (const char* branch : {"once", "lasting", "granted", "refused", "unanswered"})
        CHECK_FALSE(decide_command(learned.commands, "git", {"push", "origin", branch}).allowed);
    std::set<std::string> hosts;
    for (const auto& rule : *learned.allowed_hosts)
        hosts.insert(rule.text);
    CHECK(hosts == std::set<std::string>{"allowed.example:443", "pypi.org:443"}); // a.example.net stays asked
    REQUIRE(learned.ask_hosts);
    CHECK(learned.ask_hosts->names.size() == 2);

    std::set<std::string> still_denied;
    for (const auto& entry : doc["_learned"]["still_denied"])
        still_denied.insert(entry["target"].get<std::string>());
    CHECK(still_denied == std::set<std::string>{"git push origin refused", "git push origin unanswered"});
}
