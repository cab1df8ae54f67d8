// SPDX-License-Identifier: Apache-2.0
// --lock-policy: narrowing judged on the effective access, one rule kind at a
// time and each pair of kinds that meet on the same paths. Every refused
// widening has an accepted narrowing beside it, on the same default.
#include "base/error.hpp"
#include "policy/policy.hpp"
#include "policy/policy_access.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>

using namespace cerberus;
using namespace cerberus::policy;

namespace {

Policy narrow(const std::string& base, const std::string& annotation)
{
    return narrow_policy(parse_policy(base), parse_policy(annotation));
}

// The error narrowing gives, or "accepted".
std::string verdict(const std::string& base, const std::string& annotation)
{
    try {
        narrow(base, annotation);
    } catch (const Error& e) {
        CHECK(e.errnum() == EPERM);
        return e.what();
    }
    return "accepted";
}

bool refused(const std::string& base, const std::string& annotation)
{
    return verdict(base, annotation) != "accepted";
}

// What the narrowed policy allows at path.
PathAccess access_at(const Policy& policy, const std::string& path)
{
    Policy probe;
    probe.denied_paths = {path}; // a rule naming the path makes it a point; its own policy is not judged
    for (const auto& point : path_points({&policy, &probe})) {
        if (point.path == path)
            return point.access[0];
    }
    FAIL("no point for " << path);
    return {};
}

} // namespace

TEST_CASE("narrow: allowed_paths")
{
    const char* base = R"({"allowed_paths": ["/workspace"]})";
    CHECK(verdict(base, R"({"allowed_paths": ["/workspace/src"]})") == "accepted");
    CHECK(verdict(base, R"({"allowed_paths": ["/workspace", "/data"]})") ==
          R"(policy.allowed_paths[1] "/data": makes "/data" writable, where the locked default )"
          R"((policy.not under allowed_paths or read_only_paths) denies it: this widens the locked default policy)");
    CHECK(refused(base, R"({"allowed_paths": ["/"]})"));
    CHECK(refused(base, R"({"allowed_paths": ["/workspacex"]})")); // whole components
}

TEST_CASE("narrow: read_only_paths")
{
    const char* base = R"({"read_only_paths": ["/usr"]})";
    CHECK(verdict(base, R"({"read_only_paths": ["/usr/lib"]})") == "accepted");
    CHECK(refused(base, R"({"read_only_paths": ["/etc"]})"));
    CHECK(refused(base, R"({"read_only_paths": ["/"]})"));
}

TEST_CASE("narrow: denied_paths stay denied whatever the annotation lists")
{
    const char* base = R"({"denied_paths": ["/etc/shadow"]})";
    auto p = narrow(base, R"({"denied_paths": ["/root"]})");
    CHECK(p.denied_paths == std::vector<std::string>{"/root", "/etc/shadow"});
    auto omitted = narrow(base, "{}");
    CHECK_FALSE(access_at(omitted, "/etc/shadow").read);
    CHECK(access_at(omitted, "/etc/passwd").read); // control
}

TEST_CASE("narrow: allowed_bins")
{
    const char* base = R"({"read_only_paths": ["/"], "allowed_bins": ["/bin/sh", "/usr/bin/python3"]})";
    CHECK(verdict(base, R"({"allowed_bins": ["/bin/sh"]})") == "accepted");
    CHECK(verdict(base, R"({"allowed_bins": ["/bin/sh", "/bin/busybox"]})") ==
          R"(policy.allowed_bins[1]: "/bin/busybox" widens the locked default policy)");
    CHECK(*narrow(base, "{}").allowed_bins == std::vector<std::string>{"/bin/sh", "/usr/bin/python3"});
}

TEST_CASE("narrow: allowed_hosts, by addresses and ports reached")
{
    const char* base = R"({"allowed_hosts": ["10.0.0.0/9:443", "10.128.0.0/9:443", "192.0.2.0/24:1000-2000",
                                             "192.0.2.0/25:2001-3000", "2001:db8::/32"]})";
    CHECK(verdict(base, R"({"allowed_hosts": ["10.1.2.3:443", "[2001:db8::1]:22"]})") == "accepted");
    // Covered by two entries together, not by either alone.
    CHECK(verdict(base, R"({"allowed_hosts": ["10.0.0.0/8:443"]})") == "accepted");
    CHECK(verdict(base, R"({"allowed_hosts": ["192.0.2.0/25:1500-2500"]})") == "accepted");
    CHECK(verdict(base, R"({"allowed_hosts": ["10.0.0.0/8:443-444"]})") ==
          R"(policy.allowed_hosts[0]: "10.0.0.0/8:443-444" widens the locked default policy)");
    CHECK(refused(base, R"({"allowed_hosts": ["192.0.2.0/24:1500-2500"]})")); // upper half lacks 2001-2500
    CHECK(refused(base, R"({"allowed_hosts": ["11.0.0.0/8:443"]})"));
    CHECK(refused(base, R"({"allowed_hosts": ["0.0.0.0/0"]})"));
    CHECK(refused(base, R"({"allowed_hosts": ["2001:db9::1"]})"));
    CHECK(narrow(base, "{}").allowed_hosts->size() == 5);
    CHECK(narrow(R"({})", R"({"allowed_hosts": ["0.0.0.0/0"]})").allowed_hosts->size() == 1); // no default list
}

TEST_CASE("narrow: mode")
{
    CHECK(verdict(R"({"mode": "audit"})", R"({"mode": "enforce"})") == "accepted");
    CHECK(verdict(R"({"mode": "enforce"})", R"({"mode": "audit"})") ==
          R"(policy.mode: "audit" widens the locked default policy)");
}

TEST_CASE("narrow: forbidden_caps are united")
{
    auto p = narrow(R"({"forbidden_caps": ["CAP_SYS_ADMIN"]})", R"({"forbidden_caps": ["CAP_NET_RAW"]})");
    CHECK(p.forbidden_caps == std::vector<int>{13, 21});
    CHECK(narrow(R"({"forbidden_caps": ["CAP_SYS_ADMIN"]})", "{}").forbidden_caps == std::vector<int>{21});
}

TEST_CASE("narrow: allowed_paths with read_only_paths (the issue's two widenings)")
{
    const char* base = R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr", "/workspace/.git"]})";
    // Kept, or made read-only: narrower.
    CHECK(verdict(base, R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/workspace/.git"]})") ==
          "accepted");
    CHECK(verdict(base, R"({"read_only_paths": ["/workspace"]})") == "accepted");
    // The nested read-only entry left out: the allowed parent would make it writable.
    CHECK(verdict(base, R"({"allowed_paths": ["/workspace"]})") ==
          R"(policy.allowed_paths[0] "/workspace": makes "/workspace/.git" writable, where the locked default )"
          R"((policy.read_only_paths[1] "/workspace/.git") keeps it read-only: this widens the locked default policy)");
    // The read-only path listed as allowed.
    CHECK(verdict(base, R"({"allowed_paths": ["/workspace/.git"]})") ==
          R"(policy.allowed_paths[0] "/workspace/.git": makes "/workspace/.git" writable, where the locked )"
          R"(default (policy.read_only_paths[1] "/workspace/.git") keeps it read-only: this widens the locked )"
          R"(default policy)");
    CHECK(refused(base, R"({"allowed_paths": ["/usr/lib"]})"));
    // Listed in both: writable, as the kernel side has it.
    CHECK(refused(base, R"({"allowed_paths": ["/usr/lib"], "read_only_paths": ["/usr/lib"]})"));
    CHECK(verdict(base, R"({"read_only_paths": ["/usr/lib"]})") == "accepted");
}

TEST_CASE("narrow: read_only_paths under a read-only root with allowed holes")
{
    const char* base = R"({"allowed_paths": ["/workspace", "/tmp"], "read_only_paths": ["/"]})";
    CHECK(verdict(base, R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr"]})") == "accepted");
    CHECK(verdict(base, R"({"allowed_paths": ["/workspace/a"], "read_only_paths": ["/"]})") == "accepted");
    CHECK(refused(base, R"({"allowed_paths": ["/"]})"));
    CHECK(refused(base, R"({"allowed_paths": ["/etc"]})"));
}

TEST_CASE("narrow: denied_paths with allowed_paths and read_only_paths")
{
    const char* base = R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr"],
                          "denied_paths": ["/workspace/secret", "/usr/share/keys"]})";
    // The denials hold over an annotation that allows or reads them.
    auto p = narrow(base, R"({"allowed_paths": ["/workspace/secret"], "read_only_paths": ["/usr/share/keys"]})");
    CHECK_FALSE(access_at(p, "/workspace/secret").read);
    CHECK_FALSE(access_at(p, "/usr/share/keys").read);
    // Added denials narrow.
    auto q = narrow(base, R"({"denied_paths": ["/workspace/.env"]})");
    CHECK_FALSE(access_at(q, "/workspace/.env").read);
    CHECK(access_at(q, "/workspace/src").write); // control
    // A path outside the default stays refused even when the annotation denies something inside it.
    CHECK(refused(base, R"({"allowed_paths": ["/data"], "denied_paths": ["/data/x"]})"));
}

TEST_CASE("narrow: allowed_paths and read_only_paths with allowed_bins (executable mappings)")
{
    const char* with_bins = R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr"],
                               "allowed_bins": ["/usr/bin/python3"]})";
    const char* without_bins = R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr"]})";
    // Under allowed_bins a read-only path may be mapped executable, a writable one not: making
    // /workspace read-only would let its files be loaded as code.
    CHECK(verdict(with_bins, R"({"read_only_paths": ["/workspace", "/usr"]})") ==
          R"(policy.read_only_paths[0] "/workspace": makes "/workspace" mappable as executable code (allowed_bins )"
          R"(lets read-only paths be), where the locked default (policy.allowed_paths[0] "/workspace") refuses )"
          R"(executable mappings there: this widens the locked default policy)");
    CHECK(verdict(without_bins, R"({"read_only_paths": ["/workspace", "/usr"]})") == "accepted");
    CHECK(verdict(with_bins, R"({"read_only_paths": ["/usr/lib"], "allowed_bins": ["/usr/bin/python3"]})") ==
          "accepted");
    // Binaries only, no path rules: nothing may be mapped executable but the binaries.
    const char* bins_only = R"({"allowed_bins": ["/bin/busybox"]})";
    CHECK(refused(bins_only, R"({"read_only_paths": ["/"]})"));
    CHECK(verdict(bins_only, R"({"allowed_paths": ["/workspace"]})") == "accepted");
}

TEST_CASE("narrow: denied_paths with allowed_bins")
{
    const char* base = R"({"read_only_paths": ["/"], "allowed_bins": ["/bin/sh", "/bin/ls"]})";
    auto p = narrow(base, R"({"denied_paths": ["/bin/ls"]})");
    CHECK_FALSE(access_at(p, "/bin/ls").read);
    CHECK(access_at(p, "/bin/sh").read); // control
}

TEST_CASE("narrow: the kinds that do not meet on paths, together")
{
    const char* base = R"({"mode": "enforce", "allowed_hosts": ["192.0.2.0/24:443"], "read_only_paths": ["/"],
                          "allowed_paths": ["/workspace"], "allowed_bins": ["/bin/sh"],
                          "forbidden_caps": ["CAP_SYS_ADMIN"]})";
    CHECK(verdict(base, R"({"allowed_hosts": ["192.0.2.1:443"], "forbidden_caps": ["CAP_NET_RAW"]})") == "accepted");
    CHECK(refused(base, R"({"allowed_hosts": ["192.0.2.1:443"], "mode": "audit"})"));
    CHECK(refused(base, R"({"allowed_hosts": ["192.0.2.1:80"], "forbidden_caps": ["CAP_NET_RAW"]})"));
}

TEST_CASE("effective access: the most specific entry decides, a denial always")
{
    auto p = parse_policy(R"({"allowed_paths": ["/w"], "read_only_paths": ["/", "/w/ro"], "denied_paths": ["/w/ro/x"]})");
    CHECK(access_at(p, "/w").write);
    CHECK_FALSE(access_at(p, "/w/ro").write);
    CHECK(access_at(p, "/w/ro").read);
    CHECK_FALSE(access_at(p, "/w/ro/x").read);
    CHECK_FALSE(access_at(p, "/etc").write);
    CHECK(access_at(p, "/etc").read);
    CHECK(access_at(p, "/wx").read); // "/", not "/w"
    CHECK_FALSE(access_at(p, "/wx").write);
}

TEST_CASE("effective access: 10,000 sibling and 1,000 nested paths")
{
    Policy base, annotation;
    base.allowed_paths.emplace();
    annotation.allowed_paths.emplace();
    std::string deep = "/d";
    for (int i = 0; i < 10000; ++i) {
        base.allowed_paths->push_back("/s" + std::to_string(i));
        annotation.allowed_paths->push_back("/s" + std::to_string(i) + "/x");
    }
    for (int i = 0; i < 1000; ++i) {
        deep += "/d";
        base.allowed_paths->push_back(deep);
        annotation.allowed_paths->push_back(deep + "/x");
    }
    CHECK(narrow_policy(base, annotation).allowed_paths->size() == 11000);
    annotation.allowed_paths->push_back("/t");
    CHECK_THROWS_AS(narrow_policy(base, annotation), Error);
}
