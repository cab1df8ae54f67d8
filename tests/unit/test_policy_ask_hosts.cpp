// SPDX-License-Identifier: Apache-2.0
// The policy's ask_hosts: names (never networks) a lookup of which the DNS
// gate holds for an operator, with a timeout; validated naming the entry,
// registered with the gate, and narrowed by --lock-policy (asking is narrower
// than allowing, wider than refusing). Each refusal has an accepted control.
#include "dns/dns_gate_registry.hpp"
#include "error_of.hpp"
#include "policy/policy.hpp"
#include "policy/policy_ask_hosts.hpp"

#include <doctest/doctest.h>

using namespace cerberus;
using namespace cerberus::policy;
using cerberus::test::error_of;
using namespace std::chrono_literals;

namespace {

std::string parse_error(const std::string& document)
{
    std::string error = error_of([&] { parse_policy(document); });
    return error.empty() ? "accepted" : error;
}

std::string narrow_error(const std::string& base, const std::string& annotation)
{
    std::string error = error_of([&] { narrow_policy(parse_policy(base), parse_policy(annotation)); });
    return error.empty() ? "accepted" : error;
}

} // namespace

TEST_CASE("ask_hosts: names with ports and a timeout, read and registered with the gate")
{
    Policy policy = parse_policy(R"({"allowed_hosts": ["allowed.example:443"],
        "ask_hosts": {"names": ["Other.Example.:443", "*.wild.example:80"], "ask_timeout": "3s"}})");
    REQUIRE(policy.ask_hosts);
    CHECK(policy.ask_hosts->names[0].host_name == "other.example");
    CHECK(ask_timeout_of(*policy.ask_hosts) == 3s);
    CHECK(has_host_names(policy));
    auto registration = dns::registration_of("agent", 7, "/trail", policy, {"192.0.2.53:53"});
    REQUIRE(registration.ask_names.size() == 2);
    CHECK(registration.ask_names[1].pattern == "*.wild.example");
    CHECK(registration.ask_timeout == 3s);
    CHECK(registration.names.size() == 1); // the allowed name stays apart
    auto back = dns::registration_from_json(dns::to_json(registration));
    CHECK(back.ask_names.size() == 2);
    CHECK(back.ask_timeout == 3s);
    // The default timeout, as commands' asks.
    Policy plain = parse_policy(R"({"allowed_hosts": [], "ask_hosts": {"names": ["a.example:443"]}})");
    CHECK(ask_timeout_of(*plain.ask_hosts) == 60s);
    CHECK(has_host_names(plain)); // names only asked about go through the gate too
}

TEST_CASE("ask_hosts: validated at parse, errors naming the entry")
{
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": {"names": ["a.example:443"], "ask_timeout": "10m"}})") ==
          "accepted");
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": {"names": ["a.example:443", "10.0.0.0/8:443"]}})")
              .starts_with("policy.ask_hosts.names[1]: \"10.0.0.0/8:443\": the DNS gate asks about host names only"));
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": {"names": ["a.*.example:443"]}})")
              .starts_with("policy.ask_hosts.names[0]: "));
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": {"names": [], "ask_timeout": "soon"}})")
              .starts_with("policy.ask_hosts.ask_timeout: \"soon\": a duration of at most 24h"));
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": {"names": [], "ask_timeout": "25h"}})")
              .starts_with("policy.ask_hosts.ask_timeout: \"25h\""));
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": {"names": [], "timeout": "1s"}})")
              .starts_with("policy.ask_hosts: unknown field \"timeout\""));
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": {"ask_timeout": "1s"}})")
              .starts_with("policy.ask_hosts.names: missing"));
    CHECK(parse_error(R"({"allowed_hosts": [], "ask_hosts": ["a.example:443"]})")
              .starts_with("policy.ask_hosts: expected an object"));
    // Without allowed_hosts every name resolves unasked.
    CHECK(parse_error(R"({"ask_hosts": {"names": ["a.example:443"]}})")
              .starts_with("policy.ask_hosts: asks only where allowed_hosts restricts hosts"));
}

TEST_CASE("ask_hosts: --lock-policy, asking is narrower than allowing and wider than refusing")
{
    const char* base = R"({"allowed_hosts": ["allowed.example:443"],
        "ask_hosts": {"names": ["*.asked.example:443"], "ask_timeout": "30s"}})";
    // An annotation may ask about what the default allows or asks about.
    CHECK(narrow_error(base, R"({"allowed_hosts": [], "ask_hosts": {"names": ["allowed.example:443"]}})") ==
          "accepted");
    CHECK(narrow_error(base, R"({"allowed_hosts": [], "ask_hosts": {"names": ["a.asked.example:443"]}})") ==
          "accepted");
    // Never about what the default refuses, nor on other ports.
    CHECK(narrow_error(base, R"({"allowed_hosts": [], "ask_hosts": {"names": ["other.example:443"]}})") ==
          "policy.ask_hosts.names[0]: \"other.example:443\" widens the locked default policy");
    CHECK(narrow_error(base, R"({"allowed_hosts": [], "ask_hosts": {"names": ["a.asked.example:80"]}})")
              .starts_with("policy.ask_hosts.names[0]"));
    // Nor allow what the default only asks about.
    CHECK(narrow_error(base, R"({"allowed_hosts": ["a.asked.example:443"]})")
              .starts_with("policy.allowed_hosts[0]"));
    // An annotation without ask_hosts gets the default's; one without a timeout, the default's timeout.
    Policy inherited = narrow_policy(parse_policy(base), parse_policy(R"({"allowed_hosts": ["allowed.example:443"]})"));
    REQUIRE(inherited.ask_hosts);
    CHECK(inherited.ask_hosts->names[0].host_name == "*.asked.example");
    Policy timed = narrow_policy(parse_policy(base),
                                 parse_policy(R"({"allowed_hosts": [], "ask_hosts": {"names": ["a.asked.example:443"]}})"));
    CHECK(ask_timeout_of(*timed.ask_hosts) == 30s);
}
