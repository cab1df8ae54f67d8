// SPDX-License-Identifier: Apache-2.0
// allowed_hosts names: kept as names (the DNS gate admits their addresses as
// answers arrive), matched as DNS queries carry them, narrowed as names.
#include "error_of.hpp"
#include "oci/spec.hpp"
#include "policy/policy.hpp"
#include "policy/policy_compile.hpp"
#include "policy/policy_setup.hpp"

#include <doctest/doctest.h>

using namespace cerberus;
using namespace cerberus::policy;
using cerberus::test::error_of;

namespace {

std::string refusal(const std::string& entry)
{
    return error_of([&] { parse_policy(R"({"allowed_hosts": ["1.1.1.1", ")" + entry + R"("]})"); });
}

std::string narrowing(const std::string& base, const std::string& annotation)
{
    return error_of([&] { narrow_policy(parse_policy(base), parse_policy(annotation)); });
}

} // namespace

TEST_CASE("policy names: kept as names, lower case, without the trailing dot, with their ports")
{
    auto rule = parse_host_rule("API.Example.ORG.:443", "f");
    CHECK_FALSE(rule.network);
    CHECK(rule.host_name == "api.example.org");
    CHECK(rule.ports == PortRange{443, 443});
    auto wildcard = parse_host_rule("*.GitHubUserContent.com:443-444", "f");
    CHECK(wildcard.host_name == "*.githubusercontent.com");
    CHECK(wildcard.ports == PortRange{443, 444});
    CHECK(parse_host_rule("_srv.example.org", "f").host_name == "_srv.example.org");
    CHECK(parse_host_rule(std::string(63, 'a') + ".org", "f").host_name == std::string(63, 'a') + ".org");
    // Control: addresses and CIDRs are still networks.
    CHECK(parse_host_rule("10.0.0.0/8:443", "f").network);
    CHECK(parse_host_rule("[2001:db8::1]:443", "f").network);
}

TEST_CASE("policy names: every malformed form is refused, naming the entry")
{
    CHECK(refusal("a.*.com") == R"(policy.allowed_hosts[1]: a wildcard is only a leading "*." before a name "a.*.com")");
    CHECK(refusal("*foo.com") == R"(policy.allowed_hosts[1]: a wildcard is only a leading "*." before a name "*foo.com")");
    CHECK(refusal("*") == R"(policy.allowed_hosts[1]: a wildcard is only a leading "*." before a name "*")");
    CHECK(refusal("*.*.com") == R"(policy.allowed_hosts[1]: a wildcard is only a leading "*." before a name "*.*.com")");
    CHECK(refusal("*.") == R"(policy.allowed_hosts[1]: a wildcard is only a leading "*." before a name "*.")");
    CHECK(refusal("*..") == R"(policy.allowed_hosts[1]: empty host name "*..")");
    CHECK(refusal("a..com") == R"(policy.allowed_hosts[1]: empty label in host name "a..com")");
    CHECK(refusal(".a.com") == R"(policy.allowed_hosts[1]: empty label in host name ".a.com")");
    CHECK(refusal("a.com..") == R"(policy.allowed_hosts[1]: empty label in host name "a.com..")");
    std::string long_label = std::string(64, 'a') + ".org";
    CHECK(refusal(long_label) == "policy.allowed_hosts[1]: label longer than 63 bytes in host name \"" + long_label + "\"");
    std::string long_name;
    for (int i = 0; i < 4; ++i)
        long_name += std::string(63, 'a') + ".";
    long_name += "org"; // 259 bytes
    CHECK(refusal(long_name) == "policy.allowed_hosts[1]: host name longer than 253 bytes \"" + long_name + "\"");
    CHECK(refusal("example.com/24") == R"(policy.allowed_hosts[1]: a host name cannot have a CIDR suffix "example.com/24")");
    CHECK(refusal("*.example.com/24:443") ==
          R"(policy.allowed_hosts[1]: a host name cannot have a CIDR suffix "*.example.com/24:443")");
    CHECK(refusal("exa mple.com") == R"(policy.allowed_hosts[1]: bad character in host name "exa mple.com")");
    CHECK(refusal("ex\\\"ample.com") == R"(policy.allowed_hosts[1]: bad character in host name "ex"ample.com")");
    CHECK(refusal("-a.com") == R"(policy.allowed_hosts[1]: bad character in host name "-a.com")");
    CHECK(refusal("1.2.3") == R"(policy.allowed_hosts[1]: bad address or host name "1.2.3")");
    CHECK(refusal("example.com:0") == R"(policy.allowed_hosts[1]: bad port or port range "example.com:0")");
    // Controls: the same shapes, well formed.
    CHECK(refusal("*.a.com") == "");
    CHECK(refusal("a.com.") == "");
    CHECK(refusal("a-b.com:443") == "");
    CHECK(refusal(std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') + "." +
                  std::string(61, 'd')) == ""); // 253 bytes
}

TEST_CASE("policy names: matching as DNS queries carry names")
{
    CHECK(host_name_matches("api.example.org", "api.example.org"));
    CHECK(host_name_matches("api.example.org", "API.Example.Org."));
    CHECK_FALSE(host_name_matches("api.example.org", "example.org"));
    CHECK_FALSE(host_name_matches("api.example.org", "x.api.example.org"));
    CHECK_FALSE(host_name_matches("api.example.org", "api.example.org.evil"));
    // A wildcard: one label or more, never the parent nor a lookalike.
    CHECK(host_name_matches("*.githubusercontent.com", "a.githubusercontent.com"));
    CHECK(host_name_matches("*.githubusercontent.com", "a.b.GitHubUserContent.com."));
    CHECK_FALSE(host_name_matches("*.githubusercontent.com", "githubusercontent.com"));
    CHECK_FALSE(host_name_matches("*.githubusercontent.com", "githubusercontent.com."));
    CHECK_FALSE(host_name_matches("*.githubusercontent.com", "evilgithubusercontent.com"));
    CHECK_FALSE(host_name_matches("*.githubusercontent.com", ".githubusercontent.com"));
    CHECK_FALSE(host_name_matches("*.githubusercontent.com", "a..githubusercontent.com"));
    CHECK_FALSE(host_name_matches("*.githubusercontent.com", "githubusercontent.com.evil"));
    // A pattern is no wildcard to the name it is matched against.
    CHECK_FALSE(host_name_matches("a.example.org", "*.example.org"));
}

TEST_CASE("policy names: narrowing compares names, a wildcard only by an equal or broader one")
{
    std::string base = R"({"allowed_hosts": ["api.example.org:443", "*.example.com:443-444", "10.0.0.0/8"]})";
    auto hosts = [](const std::string& list) { return R"({"allowed_hosts": [)" + list + "]}"; };
    CHECK(narrowing(base, hosts(R"("API.example.org.:443")")) == "");
    CHECK(narrowing(base, hosts(R"("a.example.com:444", "a.b.example.com:443")")) == "");
    CHECK(narrowing(base, hosts(R"("*.example.com:443", "*.a.example.com:444")")) == "");
    CHECK(narrowing(base, hosts(R"("api.example.org:80")")) ==
          R"(policy.allowed_hosts[0]: "api.example.org:80" widens the locked default policy)");
    CHECK(narrowing(base, hosts(R"("api.example.org")")) ==
          R"(policy.allowed_hosts[0]: "api.example.org" widens the locked default policy)");
    CHECK(narrowing(base, hosts(R"("x.api.example.org:443")")) ==
          R"(policy.allowed_hosts[0]: "x.api.example.org:443" widens the locked default policy)");
    CHECK(narrowing(base, hosts(R"("example.com:443")")) ==
          R"(policy.allowed_hosts[0]: "example.com:443" widens the locked default policy)");
    CHECK(narrowing(base, hosts(R"("*.example.org:443")")) ==
          R"(policy.allowed_hosts[0]: "*.example.org:443" widens the locked default policy)");
    CHECK(narrowing(base, hosts(R"("a.example.com:443-445")")) ==
          R"(policy.allowed_hosts[0]: "a.example.com:443-445" widens the locked default policy)");
    // A wildcard is not covered by a name it matches, nor a name by an address.
    CHECK(narrowing(R"({"allowed_hosts": ["a.example.com"]})", hosts(R"("*.example.com")")) ==
          R"(policy.allowed_hosts[0]: "*.example.com" widens the locked default policy)");
    CHECK(narrowing(R"({"allowed_hosts": ["*.a.example.com"]})", hosts(R"("*.example.com")")) ==
          R"(policy.allowed_hosts[0]: "*.example.com" widens the locked default policy)");
    CHECK(narrowing(base, hosts(R"("10.1.2.3:443", "example.net:443")")) ==
          R"(policy.allowed_hosts[1]: "example.net:443" widens the locked default policy)");
    // Ports of two base entries for the same name together.
    CHECK(narrowing(R"({"allowed_hosts": ["a.org:80-90", "*.org:91-100"]})", hosts(R"("a.org:85-95")")) == "");
}

TEST_CASE("policy names: compiled to CERB_HAS_NAMES and no address entries")
{
    auto names = compile_policy(parse_policy(R"({"allowed_hosts": ["api.example.org:443", "10.0.0.0/8"]})"), 7, 0);
    CHECK((names.policy.flags & CERB_HAS_NAMES) != 0);
    CHECK((names.policy.flags & CERB_HAS_HOSTS) != 0);
    CHECK(names.net4.size() == 1);
    CHECK(names.net6.empty());
    auto only_names = compile_policy(parse_policy(R"({"allowed_hosts": ["*.example.org"]})"), 7, 0);
    CHECK((only_names.policy.flags & CERB_HAS_NAMES) != 0);
    CHECK(only_names.net4.empty());
    // Control: addresses alone.
    auto addresses = compile_policy(parse_policy(R"({"allowed_hosts": ["10.0.0.0/8"]})"), 7, 0);
    CHECK((addresses.policy.flags & CERB_HAS_NAMES) == 0);
    CHECK((addresses.policy.flags & CERB_HAS_HOSTS) != 0);
}
