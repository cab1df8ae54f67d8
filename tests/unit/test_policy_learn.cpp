// SPDX-License-Identifier: Apache-2.0
// Learn mode and policy check: the user-space decision mirrors the kernel's
// rules, and the learned policy allows exactly what was recorded (plus folding).
#include "base/error.hpp"
#include "policy/policy.hpp"
#include "policy/policy_check.hpp"
#include "policy/policy_commands.hpp"
#include "policy/policy_document.hpp"
#include "policy/policy_learn.hpp"
#include "policy/policy_records.hpp"

#include <doctest/doctest.h>

#include <sys/socket.h>

#include <set>
#include <string>
#include <vector>

using namespace cerberus;
using namespace cerberus::policy;
using nlohmann::json;

namespace {

Action act(std::string op, std::string target, bool write = false, std::string rule = "")
{
    return Action{std::move(op), std::move(target), write, std::move(rule)};
}

std::string parse_error(const std::string& document)
{
    try {
        parse_policy(document);
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

std::optional<std::string> decide(const std::string& document, const Action& action)
{
    return denying_rule(parse_policy(document), action);
}

const char* restrictive = R"({"mode": "audit", "allowed_hosts": ["192.0.2.0/24:443"], "allowed_paths": ["/workspace"],
    "read_only_paths": ["/bin", "/etc"], "denied_paths": ["/etc/shadow"], "allowed_bins": ["/bin/busybox"],
    "forbidden_caps": ["CAP_NET_RAW"]})";

} // namespace

TEST_CASE("policy check: each rule kind decides as the kernel programs do, with an allowed control beside it")
{
    CHECK(decide(restrictive, act("connect", "192.0.2.7:443")) == std::nullopt);
    CHECK(decide(restrictive, act("connect", "192.0.2.7:80")) == "not in allowed_hosts");
    CHECK(decide(restrictive, act("sendmsg", "203.0.113.9:53")) == "not in allowed_hosts");
    CHECK(decide(restrictive, act("connect", "[::ffff:192.0.2.7]:443")) == std::nullopt); // IPv4-mapped
    CHECK(decide(restrictive, act("connect", "[2001:db8::1]:443")) == "not in allowed_hosts");
    CHECK(decide(restrictive, act("open", "/workspace/notes", true)) == std::nullopt);
    CHECK(decide(restrictive, act("open", "/etc/passwd")) == std::nullopt);
    CHECK(decide(restrictive, act("open", "/etc/passwd", true)) == "read_only_paths /etc");
    CHECK(decide(restrictive, act("open", "/etc/shadow")) == "denied_paths /etc/shadow");
    CHECK(decide(restrictive, act("open", "/root/.ssh/id_ed25519")) == "not in allowed_paths");
    CHECK(decide(restrictive, act("open", "/workspacefoo")) == "not in allowed_paths"); // whole components
    CHECK(decide(restrictive, act("unlink", "/etc/hosts")) == "read_only_paths /etc");
    CHECK(decide(restrictive, act("connect", "/run/docker.sock")) == "not in allowed_paths"); // unix socket
    CHECK(decide(restrictive, act("exec", "/bin/busybox")) == std::nullopt);
    CHECK(decide(restrictive, act("exec", "/workspace/payload")) == "not in allowed_bins");
    CHECK(decide(restrictive, act("mmap_exec", "/bin/lib.so")) == std::nullopt); // under read_only_paths
    CHECK(decide(restrictive, act("mmap_exec", "/workspace/lib.so")) ==
          "executable mapping not in allowed_bins or read_only_paths");
    CHECK(decide(restrictive, act("capability", "CAP_NET_RAW")) == "forbidden_caps CAP_NET_RAW");
    CHECK(decide(restrictive, act("capability", "CAP_CHOWN")) == std::nullopt);
    auto escalation = act("bpf", "cmd=0", false, "escalation is shut under a policy");
    CHECK(decide(restrictive, escalation) == "escalation is shut under a policy");
    CHECK(decide("{}", escalation) == "escalation is shut under a policy"); // under every policy
    CHECK(decide("{}", act("mount", "", false, "escalation is shut under a policy")) == std::nullopt);
    // Without the lists, nothing of their kind is restricted.
    CHECK(decide("{}", act("connect", "203.0.113.9:443")) == std::nullopt);
    CHECK(decide("{}", act("open", "/root/.ssh/id_ed25519", true)) == std::nullopt);
    CHECK(decide("{}", act("exec", "/workspace/payload")) == std::nullopt);
}

TEST_CASE("policy check: the longest allowed or read-only entry decides, as in the kernel's walk")
{
    const char* nested = R"({"allowed_paths": ["/a"], "read_only_paths": ["/a/docs"]})";
    CHECK(decide(nested, act("open", "/a/x", true)) == std::nullopt);
    CHECK(decide(nested, act("open", "/a/docs/x", true)) == "read_only_paths /a/docs");
    CHECK(decide(nested, act("open", "/a/docs/x")) == std::nullopt);
}

TEST_CASE("policy check: records become actions; other records do not")
{
    auto action = action_of_record(json::parse(
        R"({"type":"denial","op":"open","target":"/x","access":"write","verdict":"audit","rule":"not in allowed_paths"})"));
    REQUIRE(action);
    CHECK(action->op == "open");
    CHECK(action->write);
    CHECK_FALSE(action_of_record(json::parse(R"({"type":"lost","count":1,"total":1})")));
    CHECK_FALSE(action_of_record(json::parse(R"({"type":"start","policy":{}})")));
}

TEST_CASE("policy document: written back, it parses to the same policy; _learned is accepted and enforces nothing")
{
    Policy p = parse_policy(restrictive);
    Policy again = parse_policy(to_document(p).dump());
    CHECK(to_document(again) == to_document(p));
    CHECK(to_document(p)["forbidden_caps"] == json::array({"CAP_NET_RAW"}));
    CHECK_FALSE(to_document(parse_policy("{}")).contains("allowed_hosts")); // absent stays absent
    CHECK(to_document(parse_policy(R"({"allowed_hosts": []})"))["allowed_hosts"] == json::array());
    Policy with_section = parse_policy(R"({"allowed_paths": ["/w"], "_learned": {"anything": ["goes", 1]}})");
    CHECK(to_document(with_section) == to_document(parse_policy(R"({"allowed_paths": ["/w"]})")));
    CHECK(parse_error(R"({"_learned": "text"})") == "policy._learned: expected an object, got string \"text\"");
    CHECK(parse_error(R"({"_comment": {}})") == "policy: unknown field \"_comment\"");
}

TEST_CASE("policy document: host rules are written as they were, or built from the rule")
{
    HostRule v6{.network = Cidr{.family = AF_INET6, .addr = {0x20, 0x01, 0x0d, 0xb8}, .prefix = 128}, .ports = {443, 443}};
    CHECK(host_rule_text(v6) == "[2001:db8::]:443");
    HostRule range{.network = Cidr{.family = AF_INET, .addr = {10}, .prefix = 8}, .ports = {1000, 2000}};
    CHECK(host_rule_text(range) == "10.0.0.0/8:1000-2000");
    HostRule any{.network = Cidr{.family = AF_INET, .addr = {192, 0, 2, 1}, .prefix = 32}};
    CHECK(host_rule_text(any) == "192.0.2.1");
}

TEST_CASE("learn: the smallest widening under which every recorded action is allowed")
{
    Policy base = parse_policy(restrictive);
    std::vector<Action> actions = {
        act("connect", "203.0.113.9:443"), act("connect", "203.0.113.9:8443"), act("connect", "203.0.113.9:443"),
        act("sendmsg", "[2001:db8::53]:53"),
        act("open", "/data/a"), act("open", "/data/b"), act("open", "/data/c"), // three files: /data
        act("open", "/opt/tool/config"),                                        // one file: exact
        act("open", "/out/report", true),
        act("open", "/etc/resolv.conf", true), // a write under read-only /etc
        act("exec", "/usr/bin/python3"),
        act("open", "/workspace/fine", true), // allowed already: nothing to add
        act("open", "/etc/shadow", false, "denied_paths /etc/shadow"),
        act("capability", "CAP_NET_RAW", false, "forbidden_caps CAP_NET_RAW"),
        act("userns", "", false, "escalation is shut under a policy"),
    };
    Learned learned = learn_policy(base, actions);
    auto doc = to_document(learned.policy);
    CHECK(doc["mode"] == "enforce");
    CHECK(doc["allowed_hosts"] == json::array({"192.0.2.0/24:443", "[2001:db8::53]:53", "203.0.113.9:443",
                                               "203.0.113.9:8443"}));
    CHECK(doc["read_only_paths"] == json::array({"/bin", "/etc", "/data", "/opt/tool/config"}));
    CHECK(doc["allowed_paths"] == json::array({"/workspace", "/etc/resolv.conf", "/out/report"}));
    CHECK(doc["allowed_bins"] == json::array({"/bin/busybox", "/usr/bin/python3"}));
    CHECK(doc["denied_paths"] == json::array({"/etc/shadow"}));
    CHECK(doc["forbidden_caps"] == json::array({"CAP_NET_RAW"}));
    CHECK(learned.folded == json::parse(R"({"/data": ["/data/a", "/data/b", "/data/c"]})"));
    REQUIRE(learned.still_denied.size() == 3);
    // Every action is allowed now but those no widening of allow-lists can allow.
    for (const auto& action : actions) {
        bool kept = action.target == "/etc/shadow" || action.op == "capability" || action.op == "userns";
        CHECK_MESSAGE(denying_rule(learned.policy, action).has_value() == kept, action.op << " " << action.target);
    }
    // And one more action of any kind is still denied.
    CHECK(denying_rule(learned.policy, act("connect", "203.0.113.10:443")));
    CHECK(denying_rule(learned.policy, act("open", "/opt/tool/other")));
    CHECK(denying_rule(learned.policy, act("open", "/data/a", true)));
    CHECK(denying_rule(learned.policy, act("exec", "/usr/bin/perl")));
}

TEST_CASE("learn: folding never makes a directory the base keeps read-only writable, nor folds into /")
{
    Policy base = parse_policy(R"({"allowed_paths": ["/w"], "read_only_paths": ["/etc"]})");
    Learned learned = learn_policy(base, {act("open", "/etc/a", true), act("open", "/etc/b", true),
                                          act("open", "/etc/c", true), act("open", "/x"), act("open", "/y"),
                                          act("open", "/z")});
    auto doc = to_document(learned.policy);
    CHECK(doc["allowed_paths"] == json::array({"/w", "/etc/a", "/etc/b", "/etc/c"}));
    CHECK(doc["read_only_paths"] == json::array({"/etc", "/x", "/y", "/z"}));
}

TEST_CASE("learn: for landlock, a name the agent made is learned as its directory, never one the base keeps read-only")
{
    Policy base = parse_policy(R"({"allowed_paths": ["/w"], "read_only_paths": ["/etc"]})");
    std::vector<Action> made = {act("create", "/data/result", true), act("create", "/data/cache", true),
                                act("create", "/etc/new", true), act("open", "/data/x", true)};
    Learned landlock = learn_policy(base, made, true);
    CHECK(to_document(landlock.policy)["allowed_paths"] == json::array({"/w", "/data"}));
    CHECK(landlock.folded["/data"] == json::array({"/data/cache", "/data/result"}));
    REQUIRE(landlock.still_denied.size() == 1);
    CHECK(landlock.still_denied[0]["target"] == "/etc/new");
    CHECK(landlock.still_denied[0]["rule"] == "read_only_paths /etc");
    // The control: where rules match names (the BPF LSM), each name is its own entry.
    Learned names = learn_policy(base, {made[0], made[1]});
    CHECK(to_document(names.policy)["allowed_paths"] == json::array({"/w", "/data/cache", "/data/result"}));
}

TEST_CASE("learn: a binary the agent may write is never made an allowed binary")
{
    Policy base = parse_policy(R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/bin"], "allowed_bins": ["/bin/sh"]})");
    Learned learned = learn_policy(base, {act("exec", "/workspace/update"), act("exec", "/bin/tool")});
    CHECK(to_document(learned.policy)["allowed_bins"] == json::array({"/bin/sh", "/bin/tool"}));
    REQUIRE(learned.still_denied.size() == 1);
    CHECK(learned.still_denied[0]["target"] == "/workspace/update");
    CHECK(learned.still_denied[0]["rule"] == "not in allowed_bins, and the agent may write it");
    CHECK(denying_rule(learned.policy, act("exec", "/workspace/update")));
}

TEST_CASE("learn: the document says from what and when, and what it added")
{
    Learned learned = learn_policy(parse_policy(restrictive), {act("connect", "203.0.113.9:443")});
    auto doc = learned_document(learned, {{"learned_from", "/var/log/cerberus/a.jsonl"}});
    CHECK(doc["_learned"]["learned_from"] == "/var/log/cerberus/a.jsonl");
    CHECK(doc["_learned"]["added"] == json::parse(R"({"allowed_hosts": ["203.0.113.9:443"]})"));
    CHECK_NOTHROW(parse_policy(doc.dump())); // the learned document is a policy as it stands
}

TEST_CASE("learn: names from the DNS gate's audit records, not the addresses they resolved to")
{
    std::vector<json> records{
        json::parse(R"({"type":"start","enforcement":"landlock","policy":{"allowed_hosts":["svc.test:80"]}})")};
    auto asked = [&](const std::string& name, const std::string& address) {
        json record = {{"type", "dns"}, {"name", name}, {"qtype", "A"}, {"verdict", "audit"},
                       {"rule", "not in allowed_hosts"}};
        records.push_back(record); // the query's record
        record["address"] = address;
        records.push_back(record); // the answer's
    };
    auto connected = [&](const std::string& target) {
        records.push_back({{"type", "denial"}, {"op", "connect"}, {"target", target}, {"verdict", "audit"},
                           {"rule", "not in allowed_hosts"}});
    };
    asked("api.example.com", "203.0.113.7");
    connected("203.0.113.7:443");
    connected("203.0.113.7:8443");
    for (const char* sibling : {"a", "b", "c"}) { // three of one parent: a wildcard
        asked(std::string(sibling) + ".cdn.example.com", std::string("198.51.100.") + (sibling[0] == 'a' ? "1" : "2"));
        connected(std::string("198.51.100.") + (sibling[0] == 'a' ? "1" : "2") + ":443");
    }
    for (const char* sibling : {"x", "y"}) { // two: no wildcard
        asked(std::string(sibling) + ".two.example.org", "192.0.2.77");
        connected("192.0.2.77:443");
    }
    for (const char* name : {"a.com", "b.com", "c.com"}) { // siblings under a top-level domain: never "*.com"
        asked(name, "192.0.2.88");
        connected("192.0.2.88:443");
    }
    asked("only.example.net", "192.0.2.99"); // looked up, never connected to
    connected("192.0.2.50:22"); // an address no answer carried: learned as the address

    auto doc = learn_from_records(records, "/tmp/trail.jsonl", std::nullopt, "2026-12-05T20:00:00Z");
    std::set<std::string> added;
    for (const auto& entry : doc["_learned"]["added"]["allowed_hosts"])
        added.insert(entry.get<std::string>());
    CHECK(added == std::set<std::string>{"api.example.com:443", "api.example.com:8443", "*.cdn.example.com:443",
                                         "x.two.example.org:443", "y.two.example.org:443", "a.com:443", "b.com:443",
                                         "c.com:443", "192.0.2.50:22"});
    // Controls: the addresses the names resolved to are not proposed.
    for (const char* address : {"203.0.113.7:443", "198.51.100.1:443", "192.0.2.77:443", "192.0.2.99"})
        CHECK_FALSE(added.count(address));
    CHECK(doc["_learned"]["folded"]["*.cdn.example.com"] ==
          json::parse(R"(["a.cdn.example.com", "b.cdn.example.com", "c.cdn.example.com"])"));
    CHECK(doc["_learned"]["only_asked"] == json::parse(R"(["only.example.net"])"));
    CHECK(doc["_learned"]["names_asked"] == 10);
    Policy learned = parse_policy(doc.dump());
    CHECK(has_host_names(learned));
    CHECK(learned.mode == Mode::enforce);
}

namespace {

json command_record(const std::string& tool, const std::vector<std::string>& args, const std::string& verdict,
                    const std::string& rule)
{
    return {{"type", "command"}, {"tool", tool},  {"args", args},          {"cwd", "/"},
            {"verdict", verdict}, {"rule", rule}, {"backend", "static"}, {"duration_ms", 3}};
}

const char* brokered = R"({"mode": "audit", "commands": {"git": {"allow": ["status"], "deny": ["push --force *"]}}})";

} // namespace

TEST_CASE("policy check: a command record is the broker's call, judged by the policy's commands")
{
    auto call = action_of_record(command_record("git", {"push", "origin", "main"}, "allowed", "x"));
    REQUIRE(call);
    CHECK(call->op == "command");
    CHECK(call->target == "git push origin main");
    CHECK(decide(R"({"commands": {"git": {"allow": ["push origin *"]}}})", *call) == std::nullopt); // the control
    CHECK(decide(R"({"commands": {"git": {"allow": ["push origin feature/*"]}}})", *call) ==
          "not in commands.git.allow");
    CHECK(decide(R"({"commands": {"git": {"allow": ["push *"], "deny": ["push * main"]}}})", *call) ==
          R"(commands.git.deny[0] "push * main")");
    CHECK(decide("{}", *call) == "not in commands"); // a policy without the tool: the shim is not there
    CHECK_FALSE(call->bytes_in); // a record without the counts (a denied call, an older trail)
    auto counted = command_record("git", {"status"}, "allowed", "x");
    counted["bytes_in"] = 5;
    counted["bytes_out"] = 70000;
    auto moved = action_of_record(counted);
    REQUIRE(moved);
    CHECK(moved->bytes_in == 5u);
    CHECK(moved->bytes_out == 70000u);
    // A call that failed before the broker decided is nothing to judge.
    CHECK_FALSE(action_of_record(command_record("git", {"x"}, "failed", "malformed call")));
    CHECK_FALSE(action_of_record(json{{"type", "command"}, {"tool", "git"}, {"verdict", "allowed"}}));
}

TEST_CASE("learn: a brokered call audit mode ran is allowed as exactly itself; deny patterns stay")
{
    std::vector<json> records{json::parse(std::string(R"({"type":"start","enforcement":"landlock","policy":)") +
                                          brokered + "}")};
    records.push_back(command_record("git", {"status"}, "allowed", R"(commands.git.allow[0] "status")"));
    records.push_back(command_record("git", {"diff", "HEAD~1"}, "audit", "not in commands.git.allow"));
    records.push_back(command_record("git", {"diff", "HEAD~1"}, "audit", "not in commands.git.allow")); // twice
    records.push_back(command_record("git", {"push", "origin", "feature/x"}, "audit", "not in commands.git.allow"));
    records.push_back(command_record("git", {"push", "--force", "origin", "main"}, "audit",
                                     R"(commands.git.deny[0] "push --force *")"));
    records.push_back(command_record("git", {"commit", "-m", "two words"}, "audit", "not in commands.git.allow"));
    auto doc = learn_from_records(records, "t.jsonl", std::nullopt, "now");
    CHECK(doc["_learned"]["added"] ==
          json::parse(R"({"commands.git.allow": ["diff HEAD~1", "push origin feature/x"]})"));
    Policy learned = parse_policy(doc.dump());
    CHECK(learned.mode == Mode::enforce);
    CHECK(learned.commands.at("git").deny == std::vector<std::string>{"push --force *"});
    std::vector<std::vector<std::string>> ran{{"status"}, {"diff", "HEAD~1"}, {"push", "origin", "feature/x"}};
    for (const auto& args : ran)
        CHECK(decide_command(learned.commands, "git", args).allowed);
    // Exactly those calls: their neighbours stay denied, as do the deny pattern's and the unspellable one.
    CHECK_FALSE(decide_command(learned.commands, "git", {"diff", "HEAD~2"}).allowed);
    CHECK_FALSE(decide_command(learned.commands, "git", {"push", "origin", "feature/y"}).allowed);
    CHECK_FALSE(decide_command(learned.commands, "git", {"push", "--force", "origin", "main"}).allowed);
    CHECK_FALSE(decide_command(learned.commands, "git", {"commit", "-m", "two words"}).allowed);
    std::set<std::string> still_denied;
    for (const auto& entry : doc["_learned"]["still_denied"])
        still_denied.insert(entry["target"].get<std::string>() + " | " + entry["rule"].get<std::string>());
    CHECK(still_denied ==
          std::set<std::string>{R"(git push --force origin main | commands.git.deny[0] "push --force *")",
                                "git commit -m two words | an argument no pattern word spells (empty, with spaces "
                                R"(or a "*"))"});
}
