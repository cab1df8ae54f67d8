#include "base/error.hpp"
#include "policy/policy_compile.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>

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

    REQUIRE(c.net6.size() == 2);
    CHECK(c.net6[0].key.prefixlen == 64 + 128);
    CHECK(c.net6[0].key.addr[0] == 0x20);
    CHECK(c.net6[0].key.addr[15] == 1);
    CHECK(c.net6[1].key.prefixlen == 64 + 96);

    std::string many = R"({"allowed_hosts": [)";
    for (int port = 1; port <= 9; ++port)
        many += std::string(port > 1 ? "," : "") + "\"10.0.0.1:" + std::to_string(port * 2) + "\"";
    CHECK_THROWS_WITH(compile_policy(parse_policy(many + "]}"), cgroup, seed),
                      "policy.allowed_hosts: 9 port ranges apply to 10.0.0.1/32, at most 8 fit");
    auto unresolved = parse_policy(R"({"allowed_hosts": ["example.org"]})");
    CHECK_THROWS_AS(compile_policy(unresolved, cgroup, seed), Error);
}

TEST_CASE("compile: path rules")
{
    auto c = compile_policy(parse_policy(R"({
        "allowed_paths": ["/workspace", "/tmp"], "read_only_paths": ["/usr", "/"],
        "denied_paths": ["/workspace/.git/config"], "allowed_bins": ["/usr/bin/python3", "/tmp"]})"),
                            cgroup, seed);
    CHECK(c.paths.size() == 6);
    CHECK(find_path(c, "/workspace")->value.kinds == CERB_PATH_ALLOW);
    CHECK(find_path(c, "/tmp")->value.kinds == (CERB_PATH_ALLOW | CERB_PATH_BIN));
    CHECK(find_path(c, "/usr")->value.kinds == CERB_PATH_READ_ONLY);
    CHECK(find_path(c, "")->value.kinds == CERB_PATH_READ_ONLY); // the root is the empty prefix
    CHECK(find_path(c, "/workspace/.git/config")->value.kinds == CERB_PATH_DENY);
    CHECK(find_path(c, "/usr/bin/python3")->value.kinds == CERB_PATH_BIN);
    for (const auto& e : c.paths)
        CHECK(e.key.cgroup_id == cgroup);
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
    CHECK(path_entries == 4000);
    CHECK(net_entries <= CERB_MAX_NET_RULES);
    CHECK(path_entries <= CERB_MAX_PATH_RULES);
}
