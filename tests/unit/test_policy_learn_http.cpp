// SPDX-License-Identifier: Apache-2.0
// Learn mode and policy check over the egress proxy's http records: a request
// the rules refused (audit mode let it through) is learned as the allowed_http
// entry of exactly it, paths folded into "parent/*" only for fold_at or more
// siblings of one method and host; the learned policy is one create accepts,
// allows what was requested and still refuses the rest.
#include "policy/policy.hpp"
#include "policy/policy_check.hpp"
#include "policy/policy_http.hpp"
#include "policy/policy_records.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace cerberus;
using namespace cerberus::policy;
using nlohmann::json;

namespace {

const char* base_policy = R"({"mode": "audit", "allowed_hosts": [],
    "allowed_http": ["GET https://api.example.org/repos/*"]})";

json start_record()
{
    json policy = json::parse(base_policy);
    return {{"type", "start"}, {"id", "agent"}, {"time", "2026-12-06T10:00:00Z"}, {"policy", policy}};
}

// An http record as the proxy writes it.
json request_record(const std::string& method, const std::string& url, const std::string& verdict = "audit",
                    const std::string& rule = "not in allowed_http")
{
    return {{"type", "http"}, {"id", "agent"},   {"time", "2026-12-06T10:00:01Z"}, {"kind", "http"},
            {"verdict", verdict}, {"server_name", "api.example.org"}, {"method", method}, {"url", url},
            {"address", "203.0.113.7:443"}, {"rule", rule}, {"status", 200}};
}

json learned_from(const std::vector<json>& requests)
{
    std::vector<json> records = {start_record()};
    records.insert(records.end(), requests.begin(), requests.end());
    return learn_from_records(records, "agent.jsonl", std::nullopt, "2026-12-06T11:00:00Z");
}

std::vector<std::string> added_http(const json& document)
{
    return document["_learned"]["added"].value("allowed_http", std::vector<std::string>{});
}

std::optional<std::string> decide(const Policy& policy, const std::string& request)
{
    return denying_rule(policy, Action{.op = "http", .target = request});
}

} // namespace

TEST_CASE("policy check: an http record the rules decided is a request action; a refused handshake or form is not")
{
    auto action = action_of_record(request_record("POST", "https://api.example.org/repos/acme/x"));
    REQUIRE(action);
    CHECK(action->op == "http");
    CHECK(action->target == "POST https://api.example.org/repos/acme/x");
    CHECK(action_of_record(request_record("GET", "https://api.example.org/repos/x", "allowed",
                                          "allowed_http[0] \"GET https://api.example.org/repos/*\"")));
    auto fronting = request_record("GET", "https://api.example.org/", "denied", "");
    CHECK_FALSE(action_of_record(fronting)); // refused for its Host, which no entry can allow
    json handshake = {{"type", "http"}, {"kind", "tls"}, {"verdict", "denied"}, {"rule", ""}};
    CHECK_FALSE(action_of_record(handshake));
}

TEST_CASE("policy check: a request is judged by allowed_http as the proxy judges it")
{
    Policy policy = parse_policy(base_policy);
    CHECK(decide(policy, "GET https://api.example.org/repos/acme/x") == std::nullopt);
    CHECK(decide(policy, "POST https://api.example.org/repos/acme/x") == "not in allowed_http");
    CHECK(decide(policy, "GET https://api.example.org:8443/repos/acme/x") == "not in allowed_http"); // another port
    CHECK(decide(policy, "GET wss://api.example.org/repos/acme/x") == "not in allowed_http"); // an upgrade
    CHECK(decide(parse_policy("{}"), "POST https://api.example.org/x") == std::nullopt); // no proxy: not its to judge
}

TEST_CASE("learn: each request audit mode let through becomes the entry of exactly it; allowed ones add nothing")
{
    auto document = learned_from({
        request_record("POST", "https://api.example.org/repos/acme/x"),
        request_record("GET", "https://api.example.org/other/a"),
        request_record("GET", "https://api.example.org/other/b"), // two siblings: no glob
        request_record("GET", "wss://api.example.org/socket/chat"),
        request_record("GET", "https://api.example.org/repos/acme/y", "allowed",
                       "allowed_http[0] \"GET https://api.example.org/repos/*\""),
    });
    CHECK(added_http(document) == std::vector<std::string>{
                                      "GET https://api.example.org/other/a",
                                      "GET https://api.example.org/other/b",
                                      "GET wss://api.example.org/socket/chat",
                                      "POST https://api.example.org/repos/acme/x",
                                  });
    CHECK_FALSE(document["_learned"].contains("folded"));
    Policy learned = parse_policy(document.dump()); // create accepts it: allowed_hosts is still there
    CHECK(learned.mode == Mode::enforce);
    CHECK(decide(learned, "POST https://api.example.org/repos/acme/x") == std::nullopt);
    CHECK(decide(learned, "GET wss://api.example.org/socket/chat") == std::nullopt);
    CHECK(decide(learned, "POST https://api.example.org/repos/acme/never") == "not in allowed_http");
    CHECK(decide(learned, "GET https://api.example.org/other/c") == "not in allowed_http");
    CHECK(decide(learned, "GET https://api.example.org/socket/chat") == "not in allowed_http"); // no plain GET
}

TEST_CASE("learn: three siblings of one method and host fold into parent/*; fewer, another method, or / do not")
{
    auto document = learned_from({
        request_record("GET", "https://api.example.org/issues/1"),
        request_record("GET", "https://api.example.org/issues/2"),
        request_record("GET", "https://api.example.org/issues/3"),
        request_record("GET", "https://api.example.org/issues/3"), // once more: still three siblings
        request_record("DELETE", "https://api.example.org/issues/4"), // another method: its own entry
        request_record("PUT", "https://api.example.org/a"),
        request_record("PUT", "https://api.example.org/b"),
        request_record("PUT", "https://api.example.org/c"), // under /: never "/*", the whole host
    });
    CHECK(added_http(document) == std::vector<std::string>{
                                      "DELETE https://api.example.org/issues/4",
                                      "GET https://api.example.org/issues/*",
                                      "PUT https://api.example.org/a",
                                      "PUT https://api.example.org/b",
                                      "PUT https://api.example.org/c",
                                  });
    CHECK(document["_learned"]["folded"]["GET https://api.example.org/issues/*"] ==
          json::array({"GET https://api.example.org/issues/1", "GET https://api.example.org/issues/2",
                       "GET https://api.example.org/issues/3"}));
    Policy learned = parse_policy(document.dump());
    CHECK(decide(learned, "GET https://api.example.org/issues/99") == std::nullopt); // the glob's widening
    CHECK(decide(learned, "DELETE https://api.example.org/issues/1") == "not in allowed_http");
    CHECK(decide(learned, "PUT https://api.example.org/d") == "not in allowed_http");
}

TEST_CASE("learn: a parent folded under another folds into the wider glob alone")
{
    auto document = learned_from({
        request_record("GET", "https://api.example.org/docs/a"),
        request_record("GET", "https://api.example.org/docs/b"),
        request_record("GET", "https://api.example.org/docs/c"),
        request_record("GET", "https://api.example.org/docs/v2/a"),
        request_record("GET", "https://api.example.org/docs/v2/b"),
        request_record("GET", "https://api.example.org/docs/v2/c"),
        request_record("GET", "https://api.example.org:8443/docs/v2/d"), // another port: another origin
    });
    CHECK(added_http(document) == std::vector<std::string>{
                                      "GET https://api.example.org/docs/*",
                                      "GET https://api.example.org:8443/docs/v2/d",
                                  });
    CHECK(document["_learned"]["folded"]["GET https://api.example.org/docs/*"].size() == 6);
}

TEST_CASE("learn: a path no entry can spell stays denied, named so; its neighbours are learned")
{
    auto document = learned_from({
        request_record("GET", "https://api.example.org/files/a%20b"),
        request_record("GET", "https://api.example.org/files/*"),
        request_record("GET", "https://api.example.org/files/plain"),
    });
    CHECK(added_http(document) == std::vector<std::string>{"GET https://api.example.org/files/plain"});
    auto still_denied = document["_learned"]["still_denied"];
    REQUIRE(still_denied.size() == 2);
    CHECK(still_denied[0]["op"] == "http");
    CHECK(still_denied[0]["target"] == "GET https://api.example.org/files/*");
    CHECK(still_denied[0]["rule"].get<std::string>().starts_with("a path no allowed_http entry spells"));
    CHECK(still_denied[1]["target"] == "GET https://api.example.org/files/a%20b");
    CHECK(decide(parse_policy(document.dump()), "GET https://api.example.org/files/a%20b") == "not in allowed_http");
}
