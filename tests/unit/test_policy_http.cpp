// SPDX-License-Identifier: Apache-2.0
// The policy's allowed_http: entries parsed and validated naming the entry,
// requests decided by method, host, port and path glob, the rule kept out of
// allowed_hosts, and --lock-policy narrowing. Every denial has an allowed
// control beside it.
#include "base/error.hpp"
#include "policy/policy.hpp"
#include "policy/policy_document.hpp"
#include "policy/policy_http.hpp"
#include "error_of.hpp"

#include <doctest/doctest.h>

using namespace cerberus;
using namespace cerberus::policy;

namespace {

const char* api_policy = R"({"allowed_hosts": ["192.0.2.0/24:53"], "allowed_http": [
    "GET https://api.example.org/repos/acme/*",
    "POST https://api.example.org/repos/acme/*/issues",
    "GET https://*.pypi.example:8443/simple/*"]})";

// The document with one allowed_http entry (allowed_hosts beside it).
std::string with_entry(const std::string& entry)
{
    return R"({"allowed_hosts": [], "allowed_http": [")" + entry + R"("]})";
}

std::string parse_error(const std::string& document)
{
    return test::error_of([&] { parse_policy(document); });
}

std::string narrow_error(const std::string& base, const std::string& annotation)
{
    return test::error_of([&] { narrow_policy(parse_policy(base), parse_policy(annotation)); });
}

// The errno a refusal carries: EINVAL for a bad document, EPERM for a widening.
int errno_of(auto&& fn)
{
    try {
        fn();
    } catch (const Error& e) {
        return e.errnum();
    }
    return 0;
}

HttpDecision decide(const std::string& method, const std::string& host, uint16_t port, const std::string& path)
{
    return decide_http(parse_policy(api_policy).allowed_http, method, host, port, path, false);
}

} // namespace

TEST_CASE("allowed_http: entries are read into method, host, port and path")
{
    auto rules = parse_policy(api_policy).allowed_http;
    REQUIRE(rules.size() == 3);
    CHECK(rules[0].method == "GET");
    CHECK(rules[0].host_name == "api.example.org");
    CHECK(rules[0].port == 443);
    CHECK(rules[0].path == "/repos/acme/*");
    CHECK(rules[2].host_name == "*.pypi.example");
    CHECK(rules[2].port == 8443);
    CHECK(parse_policy(with_entry("GET https://API.Example.ORG./")).allowed_http[0].host_name == "api.example.org");
    CHECK(to_document(parse_policy(api_policy))["allowed_http"][1] == "POST https://api.example.org/repos/acme/*/issues");
}

TEST_CASE("allowed_http: a bad entry is named with its index and the fault")
{
    CHECK(parse_error(with_entry("GET https://api.example.org/*")) == "");
    CHECK(parse_error(with_entry("get https://api.example.org/*")) ==
          "policy.allowed_http[0]: the method must be upper-case letters (\"GET\") in \"get https://api.example.org/*\"");
    CHECK(parse_error(with_entry("GET http://api.example.org/*")) ==
          "policy.allowed_http[0]: only https:// requests and wss:// upgrades are proxied, in "
          "\"GET http://api.example.org/*\"");
    CHECK(parse_error(with_entry("GET ws://api.example.org/*")).find("only https:// requests") != std::string::npos);
    CHECK(parse_error(with_entry("POST wss://api.example.org/*")) ==
          "policy.allowed_http[0]: a WebSocket upgrade is a GET: wss:// takes only GET, in "
          "\"POST wss://api.example.org/*\"");
    CHECK(parse_error(with_entry("GET wss://api.example.org/*")) == "");
    CHECK(parse_error(with_entry("GET wss://api.example.org")).find("expected a path after the host") !=
          std::string::npos);
    CHECK(parse_error(with_entry("GET wss://192.0.2.1/")).find("not an address") != std::string::npos);
    CHECK(parse_error(with_entry("GET https://api.example.org")) ==
          "policy.allowed_http[0]: expected a path after the host (\"/\", \"/*\") in \"GET https://api.example.org\"");
    CHECK(errno_of([] { parse_policy(with_entry("GET")); }) == EINVAL);
    CHECK(parse_error(with_entry("GET")) == "policy.allowed_http[0]: expected \"METHOD https://host/path\", got \"GET\"");
    CHECK(parse_error(with_entry("GET  https://a.example/")).find("expected \"METHOD") != std::string::npos);
    CHECK(parse_error(with_entry("GET https://192.0.2.1/")) ==
          "policy.allowed_http[0]: the host must be a name, not an address (TLS to an address names no host), in "
          "\"GET https://192.0.2.1/\"");
    CHECK(parse_error(with_entry("GET https://u@a.example/")).find("without user or address") != std::string::npos);
    CHECK(parse_error(with_entry("GET https://a.example:1-9/")).find("one port, not a range") != std::string::npos);
    CHECK(parse_error(with_entry("GET https://a.*.example/")) ==
          "policy.allowed_http[0]: a wildcard is only a leading \"*.\" before a name \"a.*.example\"");
    CHECK(parse_error(with_entry("GET https://a.example/x?y=1")).find("\"?\"") != std::string::npos);
    CHECK(parse_error(with_entry("GET https://a.example/%2e%2e/x")).find("\"%\"") != std::string::npos);
    CHECK(parse_error(with_entry("GET https://a.example/a/../b")) ==
          "policy.allowed_http[0]: the path has a \"..\" segment in \"GET https://a.example/a/../b\"");
    CHECK(parse_error(with_entry("GET https://a.example/a//b")).find("empty segment") != std::string::npos);
    CHECK(parse_error(R"({"allowed_hosts": [], "allowed_http": ["GET https://a.example/", 3]})") ==
          "policy.allowed_http[1]: expected a string, got number 3");
}

TEST_CASE("allowed_http: needs allowed_hosts, and no host name there may admit its hosts directly")
{
    CHECK(parse_error(R"({"allowed_http": ["GET https://a.example/"]})") ==
          "policy.allowed_http: needs allowed_hosts: with the network open, requests could go around the proxy");
    CHECK(parse_error(R"({"allowed_hosts": ["b.example:443", "a.example:80"], "allowed_http": ["GET https://a.example/"]})") ==
          "");
    CHECK(parse_error(R"({"allowed_hosts": ["b.example:443", "a.example:443"], "allowed_http": ["GET https://a.example/"]})") ==
          "policy.allowed_http[0]: \"a.example\" is also admitted by policy.allowed_hosts[1] \"a.example:443\" on "
          "port 443, a way around the request rules");
    CHECK(parse_error(R"({"allowed_hosts": ["*.example"], "allowed_http": ["GET https://a.example/"]})")
              .find("policy.allowed_hosts[0] \"*.example\"") != std::string::npos);
    CHECK(parse_error(R"({"allowed_hosts": ["x.a.example:443"], "allowed_http": ["GET https://*.a.example/"]})")
              .find("policy.allowed_hosts[0]") != std::string::npos);
    CHECK(parse_error(R"({"allowed_hosts": ["x.b.example:443"], "allowed_http": ["GET https://*.a.example/"]})") ==
          "");
    // Audit mode is the proxy's too (it sends on what the rules refuse, recorded): accepted, its checks kept.
    CHECK(parse_error(R"({"mode": "audit", "allowed_hosts": [], "allowed_http": ["GET https://a.example/"]})") == "");
    CHECK(parse_error(R"({"mode": "audit", "allowed_http": ["GET https://a.example/"]})")
              .starts_with("policy.allowed_http: needs allowed_hosts"));
}

TEST_CASE("allowed_http: a request is allowed by method, host, port and path, else named and refused")
{
    auto allowed = decide("GET", "api.example.org", 443, "/repos/acme/widgets");
    CHECK(allowed.allowed);
    CHECK(allowed.rule == "allowed_http[0] \"GET https://api.example.org/repos/acme/*\"");
    CHECK(decide("GET", "API.example.org.", 443, "/repos/acme/widgets/pulls/1").allowed);

    auto post = decide("POST", "api.example.org", 443, "/repos/acme/widgets");
    CHECK_FALSE(post.allowed);
    CHECK(post.rule == "not in allowed_http");
    CHECK(post.allowed_here == std::vector<std::string>{"GET https://api.example.org/repos/acme/*",
                                                        "POST https://api.example.org/repos/acme/*/issues"});
    CHECK(decide("POST", "api.example.org", 443, "/repos/acme/widgets/issues").allowed);
    CHECK_FALSE(decide("POST", "api.example.org", 443, "/repos/acme/widgets/sub/issues").allowed);

    CHECK_FALSE(decide("GET", "api.example.org", 443, "/repos/other/widgets").allowed);
    CHECK_FALSE(decide("GET", "api.example.org", 443, "/repos/acme").allowed);
    CHECK_FALSE(decide("GET", "api.example.org", 8443, "/repos/acme/widgets").allowed);
    CHECK_FALSE(decide("GET", "evil.example.org", 443, "/repos/acme/widgets").allowed);
    CHECK(decide("GET", "evil.example.org", 443, "/").allowed_here.empty());

    CHECK(decide("GET", "files.pypi.example", 8443, "/simple/requests/").allowed);
    CHECK_FALSE(decide("GET", "pypi.example", 8443, "/simple/requests/").allowed);
    CHECK_FALSE(decide("GET", "files.pypi.example", 443, "/simple/requests/").allowed);
}

TEST_CASE("allowed_http: a wss entry allows a WebSocket upgrade on its paths and nothing else; https entries never one")
{
    auto rules = parse_policy(R"({"allowed_hosts": [], "allowed_http": ["GET https://chat.example/api/*",
                                   "GET wss://chat.example:8443/socket/*"]})")
                     .allowed_http;
    REQUIRE(rules.size() == 2);
    CHECK_FALSE(rules[0].websocket);
    CHECK(rules[1].websocket);
    CHECK(rules[1].host_name == "chat.example");
    CHECK(rules[1].port == 8443);
    CHECK(rules[1].path == "/socket/*");

    auto upgrade = decide_http(rules, "GET", "chat.example", 8443, "/socket/room1", true);
    CHECK(upgrade.allowed);
    CHECK(upgrade.rule == "allowed_http[1] \"GET wss://chat.example:8443/socket/*\"");
    // The same path as a plain request: the wss entry does not allow it.
    CHECK_FALSE(decide_http(rules, "GET", "chat.example", 8443, "/socket/room1", false).allowed);
    // An upgrade where only the https entry names the path: refused, both entries listed for the 403.
    CHECK(decide_http(rules, "GET", "chat.example", 443, "/api/x", false).allowed);
    auto refused = decide_http(rules, "GET", "chat.example", 443, "/api/x", true);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.rule == "not in allowed_http");
    CHECK(refused.allowed_here == std::vector<std::string>{"GET https://chat.example/api/*"});
    CHECK_FALSE(decide_http(rules, "GET", "chat.example", 8443, "/other", true).allowed);
    CHECK(decide_http(rules, "GET", "chat.example", 8443, "/other", true).allowed_here.size() == 1);
    // A wss entry's host is one a ClientHello may name.
    CHECK(http_host_allowed(rules, "chat.example", 8443));
    CHECK(to_document(parse_policy(with_entry("GET wss://chat.example/s")))["allowed_http"][0] ==
          "GET wss://chat.example/s");
}

TEST_CASE("allowed_http: the names a ClientHello may carry are those its entries name on that port")
{
    auto rules = parse_policy(api_policy).allowed_http;
    CHECK(http_host_allowed(rules, "api.example.org", 443));
    CHECK_FALSE(http_host_allowed(rules, "api.example.org", 8443));
    CHECK_FALSE(http_host_allowed(rules, "cdn.example.org", 443));
    CHECK(http_host_allowed(rules, "a.b.pypi.example", 8443));
    CHECK_FALSE(http_host_allowed(rules, "pypi.example", 8443));
}

TEST_CASE("allowed_http: path globs, a final * the rest, an inner * one segment's run")
{
    CHECK(path_glob_matches("/", "/"));
    CHECK_FALSE(path_glob_matches("/", "/a"));
    CHECK(path_glob_matches("/*", "/"));
    CHECK(path_glob_matches("/*", "/a/b/c"));
    CHECK(path_glob_matches("/a/*/c", "/a/bb/c"));
    CHECK(path_glob_matches("/a/*/c", "/a//c"));
    CHECK_FALSE(path_glob_matches("/a/*/c", "/a/b/b/c"));
    CHECK(path_glob_matches("/a/v*.json", "/a/v1.json"));
    CHECK_FALSE(path_glob_matches("/a/v*.json", "/a/v1/x.json"));
    CHECK(path_glob_matches("/a*", "/abc/d"));

    // Stars are matched segment by segment, going back only to the last one: a
    // path the agent makes long cannot make a glob of many stars slow.
    CHECK_FALSE(path_glob_matches("/*a*a*a*a*a*a*a*a*a*a*b", "/" + std::string(20000, 'a')));
    CHECK(path_glob_matches("/*a*a*a*a*a*a*a*a*a*a*b", "/" + std::string(20000, 'a') + "b"));

    CHECK(path_glob_covers("/*", "/a/*"));
    CHECK(path_glob_covers("/a/*", "/a/*/c"));
    CHECK(path_glob_covers("/a/*/c", "/a/b/c"));
    CHECK(path_glob_covers("/a/*/c", "/a/b*/c"));
    CHECK_FALSE(path_glob_covers("/a/*/c", "/a/*"));
    CHECK_FALSE(path_glob_covers("/a/b/c", "/a/*/c"));
    CHECK_FALSE(path_glob_covers("/a/*/*", "/a/*"));
    CHECK_FALSE(path_glob_covers("/a/b", "/a/b*"));
}

TEST_CASE("allowed_http: under --lock-policy an annotation only narrows the default's requests")
{
    const std::string base = R"({"allowed_hosts": [], "allowed_http": ["GET https://*.example.org/repos/*",
                                                                      "POST https://api.example.org/issues"]})";
    auto annotation = [](const std::string& entry) { return with_entry(entry); };
    CHECK(narrow_error(base, annotation("GET https://api.example.org/repos/acme/*")) == "");
    CHECK(narrow_error(base, annotation("POST https://api.example.org/issues")) == "");
    CHECK(narrow_error(base, annotation("POST https://api.example.org/repos/acme/*")) ==
          "policy.allowed_http[0]: \"POST https://api.example.org/repos/acme/*\" widens the locked default policy");
    CHECK(errno_of([&] { narrow_policy(parse_policy(base), parse_policy(annotation("GET https://x.org/"))); }) == EPERM);
    CHECK(narrow_error(base, annotation("GET https://example.org/repos/*")).find("widens") != std::string::npos);
    CHECK(narrow_error(base, annotation("GET https://api.example.org:8443/repos/*")).find("widens") !=
          std::string::npos);
    CHECK(narrow_error(base, annotation("GET https://api.example.org/*")).find("widens") != std::string::npos);
    CHECK(narrow_error(R"({"allowed_hosts": []})", annotation("GET https://api.example.org/")).find("widens") !=
          std::string::npos);

    // A wss entry is covered only by a wss entry, an https one only by an https one.
    const std::string sockets = R"({"allowed_hosts": [], "allowed_http": ["GET wss://chat.example/socket/*",
                                                                         "GET https://chat.example/api/*"]})";
    CHECK(narrow_error(sockets, annotation("GET wss://chat.example/socket/room1")) == "");
    CHECK(narrow_error(sockets, annotation("GET wss://chat.example/api/x")) ==
          "policy.allowed_http[0]: \"GET wss://chat.example/api/x\" widens the locked default policy");
    CHECK(narrow_error(sockets, annotation("GET https://chat.example/api/x")) == "");
    CHECK(narrow_error(sockets, annotation("GET https://chat.example/socket/room1")).find("widens") !=
          std::string::npos);

    // Kept when the annotation names none; replaced by the annotation's when it does.
    auto kept = narrow_policy(parse_policy(base), parse_policy(R"({"allowed_hosts": []})"));
    CHECK(kept.allowed_http.size() == 2);
    auto narrowed = narrow_policy(parse_policy(base), parse_policy(annotation("GET https://a.example.org/repos/x")));
    REQUIRE(narrowed.allowed_http.size() == 1);
    CHECK(narrowed.allowed_http[0].text == "GET https://a.example.org/repos/x");
}
