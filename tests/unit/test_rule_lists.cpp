// SPDX-License-Identifier: Apache-2.0
// The table of rule lists: each entry complete, names unique, and each list
// read, written back, narrowed, compiled, worded in the trail and learned as its entry says.
#include "audit/audit_format.hpp"
#include "base/error.hpp"
#include "policy/enforcement.hpp"
#include "policy/learn_lists.hpp"
#include "policy/policy_compile.hpp"
#include "policy/policy_document.hpp"
#include "policy/rule_lists.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <set>

using namespace cerberus;
using namespace cerberus::policy;
using nlohmann::json;

namespace {

// An example of each list, as to_document writes it back: a new list needs one here.
const std::map<std::string, json> examples = {
    {"allowed_hosts", {"10.0.0.0/8:443", "[2001:db8::1]:443", "example.org:443"}},
    {"allowed_paths", {"/workspace", "/tmp"}},
    {"read_only_paths", {"/usr", "/etc"}},
    {"denied_paths", {"/etc/shadow"}},
    {"allowed_bins", {"/usr/bin/python3"}},
    {"forbidden_caps", {"CAP_NET_RAW", "CAP_SYS_ADMIN"}},
    {"commands", json::parse(R"({"git": {"allow": ["status", "push origin feature/*"], "deny": ["push --force *"]}})")},
    {"ask_hosts", json::parse(R"({"names": ["example.org:443", "*.example.net:443"], "ask_timeout": "30s"})")},
    {"allowed_http", {"GET https://api.example.org/repos/*", "POST https://*.example.org:8443/issues"}},
};

// For each list, a recorded action its example (alone) denies: learning widens the list to allow it, or, for a
// list learning leaves as the base has it, keeps it denied. A new list needs one here.
const std::map<std::string, Action> denied_by = {
    {"allowed_hosts", {.op = "connect", .target = "203.0.113.9:443"}},
    {"allowed_paths", {.op = "open", .target = "/data/out", .write = true}},
    {"read_only_paths", {.op = "open", .target = "/opt/tool/config"}},
    {"denied_paths", {.op = "open", .target = "/etc/shadow"}},
    {"allowed_bins", {.op = "exec", .target = "/usr/bin/perl"}},
    {"forbidden_caps", {.op = "capability", .target = "CAP_NET_RAW"}},
    {"commands", {.op = "command", .target = "git log", .tool = "git", .args = {"log"}}},
    {"allowed_http", {.op = "http", .target = "DELETE https://api.example.org/repos/x"}},
};

// The lists learning leaves as the base has them, and why; any other list needs an extraction.
const std::map<std::string, std::string> left_as_base = {
    {"denied_paths", "a deny-list only shrinks"},
    {"forbidden_caps", "a deny-list only shrinks"},
    {"ask_hosts", "a name an operator answered \"always\" is learned into allowed_hosts"},
};

// What a list's check_within needs beside it: asking about names, and requests through the proxy, mean
// something only under allowed_hosts (which closes the other ways out).
const std::map<std::string, json> beside = {{"ask_hosts", {{"allowed_hosts", json::array()}}},
                                            {"allowed_http", {{"allowed_hosts", json::array()}}}};

// A list carried out outside the kernel (the broker's commands) has no part there.
bool kernel_side(const RuleList& list)
{
    return !list.coverage.empty();
}

Policy with_only(const RuleList& list)
{
    json document = beside.count(list.name) ? beside.at(list.name) : json::object();
    document[list.name] = examples.at(list.name);
    return parse_policy(document.dump());
}

} // namespace

TEST_CASE("rule lists: every entry is complete, names and labels are unique")
{
    std::set<std::string> names, labels;
    std::set<uint32_t> path_kinds;
    for (const auto& list : rule_lists()) {
        CAPTURE(list.name);
        CHECK(names.insert(list.name).second);
        CHECK(labels.insert(list.label).second);
        CHECK(std::strlen(list.label) > 0);
        CHECK((list.present != nullptr));
        CHECK((list.parse != nullptr));
        CHECK((list.write != nullptr));
        CHECK((list.combine != nullptr));
        CHECK(examples.count(list.name) == 1);
        if (!kernel_side(list)) {
            CHECK((list.paths == nullptr && list.compile == nullptr && list.policy_flag == 0 && list.trail_rule == 0));
            CHECK_FALSE(list.enforced_inside);
            continue;
        }
        // Paths go to the path map under a kind of their own; other lists compile themselves.
        CHECK((list.paths != nullptr) == (list.path_kind != 0));
        if (list.path_kind)
            CHECK(path_kinds.insert(list.path_kind).second);
        CHECK((list.paths != nullptr || list.compile != nullptr));
        CHECK((!list.exact_files || list.path_kind != 0));
        // A deny-list is worded by the entry that denied.
        CHECK((list.role == ListRole::allow_list || list.denial == DenialWording::by_entry));
    }
    CHECK(&rule_list("denied_paths") == &rule_lists()[3]);
    CHECK_THROWS_AS(rule_list("allowed_urls"), Error);
}

TEST_CASE("rule lists: each is read and written back as it was, absent stays absent")
{
    for (const auto& list : rule_lists()) {
        CAPTURE(list.name);
        Policy policy = with_only(list);
        CHECK(list.present(policy));
        auto document = to_document(policy);
        CHECK(json(document[list.name]) == examples.at(list.name));
        CHECK(to_document(parse_policy(document.dump())) == document);
        CHECK_FALSE(list.present(parse_policy("{}")));
        CHECK_FALSE(to_document(parse_policy("{}")).contains(list.name));
        // Only the lists enforced inside the container reach the saved document exec rebuilds from.
        CHECK(json::parse(policy_document(policy)).contains(list.name) == list.enforced_inside);
        // An entry of the wrong type is named with its index (commands' entries by their tool: its own tests).
        if (examples.at(list.name).is_array())
            CHECK_THROWS_WITH_AS(parse_policy(json{{list.name, {7}}}.dump()),
                             ("policy." + std::string(list.name) + "[0]: expected a string, got number 7").c_str(),
                             Error);
    }
    CHECK(to_document(parse_policy(R"({"allowed_hosts": []})"))["allowed_hosts"] == json::array());
    CHECK_FALSE(to_document(parse_policy(R"({"denied_paths": []})")).contains("denied_paths"));
}

TEST_CASE("rule lists: a locked default's list is kept when the annotation has none")
{
    for (const auto& list : rule_lists()) {
        CAPTURE(list.name);
        Policy narrowed = narrow_policy(with_only(list), parse_policy("{}"));
        CHECK(json(to_document(narrowed)[list.name]) == examples.at(list.name));
    }
}

TEST_CASE("rule lists: each brings its coverage rows and its flag, paths their kind")
{
    for (const auto& list : rule_lists()) {
        CAPTURE(list.name);
        Policy policy = with_only(list);
        for (RuleKind row : list.coverage)
            CHECK(uses_kind(policy, row));
        if (!kernel_side(list))
            continue;
        CHECK_FALSE(uses_kind(parse_policy("{}"), list.coverage.front()));
        CompiledPolicy compiled = compile_policy(policy, 1, 0);
        CHECK((compiled.policy.flags & list.policy_flag) == list.policy_flag);
        if (list.path_kind)
            CHECK(std::any_of(compiled.paths.begin(), compiled.paths.end(),
                              [&](const PathEntry& entry) { return entry.value.kinds & list.path_kind; }));
    }
}

TEST_CASE("rule lists: the trail words a kernel denial by each list as the list does")
{
    for (const auto& list : rule_lists()) {
        CAPTURE(list.name);
        if (!kernel_side(list))
            continue;
        cerb_event e{};
        e.rule = list.trail_rule;
        std::string entry;
        if (list.paths) {
            e.target_kind = CERB_TARGET_PATH;
            std::strcpy(e.path, "/a/b");
            e.path_len = 4;
            e.rule_len = list.denial == DenialWording::by_entry ? 2 : 0;
            entry = "/a";
        } else {
            e.target_kind = CERB_TARGET_CAPABILITY;
            e.number = 13;
            entry = audit::target_text(e);
        }
        CHECK(audit::rule_text(e) == list.denial_rule(entry));
    }
}

TEST_CASE("rule lists: each list learning widens has an extraction, the others say why they have none")
{
    for (const auto& list : rule_lists()) {
        CAPTURE(list.name);
        CHECK((list.learn == nullptr) == (left_as_base.count(list.name) == 1));
        // Learning never widens a deny-list; every allow-list's denials are recorded and learned.
        if (list.role == ListRole::deny_list)
            CHECK(list.learn == nullptr);
        if (list.role == ListRole::allow_list)
            CHECK(list.learn != nullptr);
        if (list.learn)
            CHECK((list.learn->take != nullptr && list.learn->add != nullptr));
    }
}

TEST_CASE("rule lists: learn mode walks the table, each list learning what its example denied")
{
    for (const auto& list : rule_lists()) {
        CAPTURE(list.name);
        if (!denied_by.count(list.name)) {
            CHECK(list.learn == nullptr); // a list with an extraction needs an example
            continue;
        }
        const Action& action = denied_by.at(list.name);
        Policy base = with_only(list);
        auto rule = denying_rule(base, action);
        REQUIRE(rule); // the control: the list alone denies it
        if (list.learn) {
            // Exactly the list's own extraction takes it.
            AskedNames none;
            Learned scratch;
            Learning learning{.base = base, .create_by_directory = false, .asked = none, .learned = scratch};
            std::vector<std::string> takers;
            for (const auto& other : rule_lists())
                if (other.learn && other.learn->take(action, *rule, learning))
                    takers.push_back(other.name);
            CHECK(takers == std::vector<std::string>{list.name});
        }

        Learned learned = learn_policy(base, {action});
        if (list.learn) {
            CHECK_FALSE(denying_rule(learned.policy, action));
            REQUIRE(learned.added.size() == 1);
            CHECK(learned.added.begin().key().starts_with(list.name));
            CHECK(learned.still_denied.empty());
            CHECK(json(to_document(learned.policy)[list.name]) != examples.at(list.name)); // the list grew
        } else {
            CHECK(denying_rule(learned.policy, action) == rule);
            REQUIRE(learned.still_denied.size() == 1);
            CHECK(learned.still_denied[0]["rule"] == *rule);
            CHECK(learned.added.empty());
        }
    }
}
