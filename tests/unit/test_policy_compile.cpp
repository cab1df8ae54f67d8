// SPDX-License-Identifier: Apache-2.0
#include "base/error.hpp"
#include "policy/policy_compile.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <tuple>

using namespace cerberus;
using namespace cerberus::policy;

namespace {

constexpr uint64_t seed = 0x1234;
constexpr uint64_t cgroup = 0x100000007ULL;

const Net4Entry* find4(const CompiledPolicy& c, const char* addr, unsigned prefix)
{
    uint8_t bytes[4];
    REQUIRE(inet_pton(AF_INET, addr, bytes) == 1);
    for (const auto& e : c.net4) {
        if (e.key.prefixlen == 64 + prefix && std::equal(bytes, bytes + 4, e.key.addr))
            return &e;
    }
    return nullptr;
}

const PathEntry* find_path(const CompiledPolicy& c, const std::string& path)
{
    for (const auto& e : c.paths) {
        if (e.key.hash == path_hash(path, seed) && e.key.len == path.size())
            return &e;
    }
    return nullptr;
}

} // namespace

TEST_CASE("compile: flags and capabilities")
{
    auto c = compile_policy(parse_policy(R"({"mode": "audit", "forbidden_caps": ["CAP_SYS_ADMIN", "CAP_BPF"]})"),
                            cgroup, seed);
    CHECK(c.cgroup_id == cgroup);
    CHECK(c.policy.flags == 0);
    CHECK(c.policy.forbidden_caps == ((1ULL << 21) | (1ULL << 39)));
    auto all = compile_policy(parse_policy(R"({"allowed_hosts": [], "read_only_paths": ["/"],
                                               "denied_paths": ["/x"], "allowed_bins": []})"),
                              cgroup, seed);
    CHECK(all.policy.flags == (CERB_ENFORCE | CERB_HAS_HOSTS | CERB_HAS_PATHS | CERB_HAS_DENIED | CERB_HAS_BINS));
}

TEST_CASE("compile: CIDRs and ports")
{
    auto c = compile_policy(parse_policy(R"({"allowed_hosts": [
        "10.0.0.0/8:80", "10.1.0.0/16:443", "10.1.0.0/16:1000-2000", "10.1.0.0/16:2001-2005",
        "1.1.1.1", "[2001:db8::1]:443", "[::ffff:0:0/96]:53"]})"),
                            cgroup, seed);
    REQUIRE(c.net4.size() == 3);
    const auto* wide = find4(c, "10.0.0.0", 8);
    REQUIRE(wide);
    CHECK(wide->key.cgroup_lo == 7);
    CHECK(wide->key.cgroup_hi == 1);
    CHECK(wide->value.nranges == 1);
    CHECK(wide->value.ranges[0].first == 80);
    // The /16 also carries the /8's port 80, since the trie only returns the longest match;
    // adjacent ranges merge.
    const auto* narrow = find4(c, "10.1.0.0", 16);
    REQUIRE(narrow);
    REQUIRE(narrow->value.nranges == 3);
    CHECK(narrow->value.ranges[0].first == 80);
    CHECK(narrow->value.ranges[1].first == 443);
    CHECK(narrow->value.ranges[2].first == 1000);
    CHECK(narrow->value.ranges[2].last == 2005);
    const auto* any_port = find4(c, "1.1.1.1", 32);
    REQUIRE(any_port);
    CHECK(any_port->value.ranges[0].first == 0);
    CHECK(any_port->value.ranges[0].last == 65535);

    REQUIRE(c.net6.size() == 2); // sorted by address
    CHECK(c.net6[0].key.prefixlen == 64 + 96);
    CHECK(c.net6[0].key.addr[10] == 0xff);
    CHECK(c.net6[1].key.prefixlen == 64 + 128);
    CHECK(c.net6[1].key.addr[0] == 0x20);
    CHECK(c.net6[1].key.addr[15] == 1);

    std::string many = R"({"allowed_hosts": [)";
    for (int port = 1; port <= 9; ++port)
        many += std::string(port > 1 ? "," : "") + "\"10.0.0.1:" + std::to_string(port * 2) + "\"";
    CHECK_THROWS_WITH(compile_policy(parse_policy(many + "]}"), cgroup, seed),
                      "policy.allowed_hosts: 9 port ranges apply to 10.0.0.1/32, at most 8 fit");
    // Names add no entries: the DNS gate admits their addresses (test_policy_names.cpp).
    auto named = compile_policy(parse_policy(R"({"allowed_hosts": ["example.org"]})"), cgroup, seed);
    CHECK(named.net4.empty());
    CHECK(named.net6.empty());
}

TEST_CASE("compile: path rules")
{
    auto c = compile_policy(parse_policy(R"({
        "allowed_paths": ["/workspace", "/tmp"], "read_only_paths": ["/usr", "/", "/opt/tool"],
        "denied_paths": ["/workspace/.git/config"], "allowed_bins": ["/usr/bin/python3", "/opt/tool"]})"),
                            cgroup, seed);
    CHECK(c.paths.size() == 10); // 7 rules, and /workspace/.git, /usr/bin and /opt above them
    CHECK(find_path(c, "/workspace")->value.kinds == (CERB_PATH_ALLOW | CERB_PATH_ABOVE));
    CHECK(find_path(c, "/tmp")->value.kinds == CERB_PATH_ALLOW);
    CHECK(find_path(c, "/opt/tool")->value.kinds == (CERB_PATH_READ_ONLY | CERB_PATH_BIN));
    CHECK(find_path(c, "/usr")->value.kinds == (CERB_PATH_READ_ONLY | CERB_PATH_ABOVE));
    CHECK(find_path(c, "")->value.kinds == CERB_PATH_READ_ONLY); // the root is the empty prefix
    CHECK(find_path(c, "/workspace/.git/config")->value.kinds == CERB_PATH_DENY);
    CHECK(find_path(c, "/usr/bin/python3")->value.kinds == CERB_PATH_BIN);
    for (const auto& e : c.paths)
        CHECK(e.key.cgroup_id == cgroup);
}

TEST_CASE("compile: the policy marks the length of every path key, and no other length")
{
    const std::string deep = "/data/a-directory-name-long-enough/to-take-the-path/past-63-bytes/file";
    auto c = compile_policy(parse_policy(R"({"allowed_paths": ["/workspace"], "denied_paths": [")" + deep + R"("]})"),
                            cgroup, seed);
    for (const auto& e : c.paths)
        CHECK((c.policy.path_lengths & cerb_path_length_bit(e.key.len)) != 0);
    CHECK((c.policy.path_lengths & cerb_path_length_bit(10)) != 0); // /workspace
    CHECK((c.policy.path_lengths & cerb_path_length_bit(5)) != 0);  // /data, above the denied path
    CHECK((c.policy.path_lengths & cerb_path_length_bit(0)) == 0);  // no rule for the root
    CHECK((c.policy.path_lengths & cerb_path_length_bit(15)) == 0); // /workspace/data: looked up by no walk
    // Every length from 63 on shares the last bit: the deep rule sets it for all of them.
    REQUIRE(deep.size() > 63);
    CHECK(cerb_path_length_bit(63) == cerb_path_length_bit(4095));
    CHECK((c.policy.path_lengths & cerb_path_length_bit(4000)) != 0);
    CHECK(compile_policy(parse_policy(R"({"allowed_paths": ["/workspace"]})"), cgroup, seed).policy.path_lengths ==
          cerb_path_length_bit(10));
}

TEST_CASE("compile: every directory above a rule is marked, the root aside")
{
    auto c = compile_policy(parse_policy(R"({"allowed_paths": ["/a/b/c/d"], "denied_paths": ["/a/b/x", "/y"],
                                             "read_only_paths": ["/"]})"),
                            cgroup, seed);
    CHECK(c.paths.size() == 7);
    CHECK(find_path(c, "/a")->value.kinds == CERB_PATH_ABOVE);
    CHECK(find_path(c, "/a/b")->value.kinds == CERB_PATH_ABOVE);
    CHECK(find_path(c, "/a/b/c")->value.kinds == CERB_PATH_ABOVE);
    CHECK(find_path(c, "/a/b/c/d")->value.kinds == CERB_PATH_ALLOW);
    CHECK(find_path(c, "/a/b/x")->value.kinds == CERB_PATH_DENY);
    CHECK(find_path(c, "/y")->value.kinds == CERB_PATH_DENY);
    CHECK(find_path(c, "")->value.kinds == CERB_PATH_READ_ONLY);
}

TEST_CASE("compile: rules 200 levels deep count each directory above them once")
{
    // 3,801 rules sharing their first 199 levels: each walk up stops at the first marked directory.
    Policy p;
    std::string deep;
    for (int i = 0; i < 199; ++i)
        deep += "/d";
    p.denied_paths.reserve(4000);
    for (int i = 0; i < 4000 - 199; ++i)
        p.denied_paths.push_back(deep + "/f" + std::to_string(i));
    CHECK(compile_policy(p, cgroup, seed).paths.size() == 4000);
}

TEST_CASE("compile: the hash is FNV-1a 64, seeded")
{
    CHECK(path_hash("", 0) == 0xcbf29ce484222325ULL);
    CHECK(path_hash("a", 0) == 0xaf63dc4c8601ec8cULL);
    CHECK(path_hash("/tmp", 1) != path_hash("/tmp", 2));
}

TEST_CASE("compile: 1,000 containers with distinct policies get distinct keys")
{
    std::set<uint64_t> policies;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>> net4;
    std::set<std::tuple<uint64_t, uint64_t, uint32_t>> paths;
    size_t net_entries = 0, path_entries = 0;
    for (uint64_t i = 0; i < 1000; ++i) {
        std::string n = std::to_string(i);
        auto json = R"({"allowed_hosts": ["10.)" + std::to_string(i % 250) + ".0.0/16:" + std::to_string(1000 + i) +
                    R"(", "192.0.2.1:443"], "allowed_paths": ["/workspace/)" + n + R"(", "/tmp"],
                       "denied_paths": ["/workspace/)" + n + R"(/secret"], "allowed_bins": ["/bin/sh"]})";
        auto c = compile_policy(parse_policy(json), 5000 + i, seed);
        policies.insert(c.cgroup_id);
        for (const auto& e : c.net4) {
            uint32_t addr;
            std::memcpy(&addr, e.key.addr, 4);
            net4.insert({e.key.prefixlen, e.key.cgroup_lo, e.key.cgroup_hi, addr});
        }
        for (const auto& e : c.paths)
            paths.insert({e.key.cgroup_id, e.key.hash, e.key.len});
        net_entries += c.net4.size();
        path_entries += c.paths.size();
    }
    CHECK(policies.size() == 1000);
    CHECK(net4.size() == net_entries);
    CHECK(net_entries == 2000);
    CHECK(paths.size() == path_entries);
    CHECK(path_entries == 6000); // and /workspace and /bin above the rules
    CHECK(net_entries <= CERB_MAX_NET_RULES);
    CHECK(path_entries <= CERB_MAX_PATH_RULES);
}

namespace {

// allowed_hosts of n distinct IPv4 (or IPv6) addresses.
Policy many_hosts(size_t n, bool v6)
{
    Policy p;
    p.allowed_hosts.emplace();
    for (size_t i = 0; i < n; ++i) {
        char text[64];
        if (v6)
            std::snprintf(text, sizeof(text), "[2001:db8::%zx:%zx]:443", i >> 16, i & 0xffff);
        else
            std::snprintf(text, sizeof(text), "10.%zu.%zu.%zu:443", (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff);
        p.allowed_hosts->push_back(parse_host_rule(text, "test"));
    }
    return p;
}

std::string compile_error(const Policy& p)
{
    try {
        compile_policy(p, cgroup, seed);
    } catch (const Error& e) {
        CHECK(e.errnum() == E2BIG);
        return e.what();
    }
    return "no error";
}

} // namespace

TEST_CASE("compile: each container gets its share of the network maps, and a clear refusal past it")
{
    CHECK(container_net_rules == 2048);
    auto at_limit = compile_policy(many_hosts(container_net_rules, false), cgroup, seed);
    CHECK(at_limit.net4.size() == container_net_rules);
    CHECK(compile_error(many_hosts(container_net_rules + 1, false)) ==
          "policy: 2049 distinct IPv4 networks in allowed_hosts, more than the 2048 one container may hold");
    CHECK(compile_policy(many_hosts(container_net_rules, true), cgroup, seed).net6.size() == container_net_rules);
    CHECK(compile_error(many_hosts(container_net_rules + 1, true)) ==
          "policy: 2049 distinct IPv6 networks in allowed_hosts, more than the 2048 one container may hold");
    // The same address many times is one entry.
    Policy repeated = many_hosts(1, false);
    for (int i = 0; i < 65536; ++i)
        repeated.allowed_hosts->push_back(repeated.allowed_hosts->front());
    CHECK(compile_policy(repeated, cgroup, seed).net4.size() == 1);
    // 65,536 distinct addresses (the whole map) are refused, not compiled for seconds first:
    // bench/policy_compile.cpp times it.
    CHECK(compile_error(many_hosts(65536, false)).find("65536 distinct IPv4 networks") != std::string::npos);
}

TEST_CASE("compile: covering networks fold their ports into every network inside them")
{
    Policy p = many_hosts(1000, false);
    p.allowed_hosts->push_back(parse_host_rule("10.0.0.0/16:80", "test"));
    p.allowed_hosts->push_back(parse_host_rule("0.0.0.0/0:53", "test"));
    auto c = compile_policy(p, cgroup, seed);
    REQUIRE(c.net4.size() == 1002);
    const auto* inside = find4(c, "10.0.3.7", 32);
    REQUIRE(inside);
    REQUIRE(inside->value.nranges == 3);
    CHECK(inside->value.ranges[0].first == 53);
    CHECK(inside->value.ranges[1].first == 80);
    CHECK(inside->value.ranges[2].first == 443);
    const auto* top = find4(c, "0.0.0.0", 0);
    REQUIRE(top);
    CHECK(top->value.nranges == 1);
}

TEST_CASE("compile: each container gets its share of the path map")
{
    CHECK(container_path_rules == 4096);
    Policy p;
    p.read_only_paths.emplace();
    for (size_t i = 0; i < container_path_rules; ++i)
        p.read_only_paths->push_back("/p" + std::to_string(i));
    CHECK(compile_policy(p, cgroup, seed).paths.size() == container_path_rules);
    p.denied_paths.push_back("/p0"); // the same path in two lists is one entry
    CHECK(compile_policy(p, cgroup, seed).paths.size() == container_path_rules);
    p.denied_paths.push_back("/q");
    CHECK(compile_error(p) == "policy: 4097 distinct paths in allowed_paths, read_only_paths, denied_paths and "
                              "allowed_bins, with the directories above them, more than the 4096 one container may "
                              "hold");
    p.denied_paths.pop_back();
    p.read_only_paths->pop_back();
    p.denied_paths.push_back("/q/r"); // and /q above it: 4,097 again
    CHECK(compile_error(p) == "policy: 4097 distinct paths in allowed_paths, read_only_paths, denied_paths and "
                              "allowed_bins, with the directories above them, more than the 4096 one container may "
                              "hold");
}
