// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_compile.hpp"
#include "policy/policy_keys.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace cerberus::policy;

namespace {

constexpr uint64_t cgroup = 0x100000007ULL;

PolicyKeys sample_keys()
{
    return keys_of(compile_policy(parse_policy(R"({"allowed_hosts": ["10.0.0.0/8:80", "[2001:db8::1]:443"],
        "allowed_paths": ["/workspace", "/tmp"], "allowed_bins": ["/bin/sh"]})"),
                                  cgroup, 0x1234));
}

template <typename Key>
bool same(const std::vector<Key>& a, const std::vector<Key>& b)
{
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Key)) == 0;
}

} // namespace

TEST_CASE("policy keys: every compiled key, encoded and decoded unchanged")
{
    PolicyKeys keys = sample_keys();
    CHECK(keys.cgroup_id == cgroup);
    CHECK(keys.net4.size() == 1);
    CHECK(keys.net6.size() == 1);
    CHECK(keys.paths.size() >= 3);
    auto decoded = decode_keys(encode_keys(keys), cgroup);
    REQUIRE(decoded);
    CHECK(decoded->cgroup_id == cgroup);
    CHECK(same(decoded->net4, keys.net4));
    CHECK(same(decoded->net6, keys.net6));
    CHECK(same(decoded->paths, keys.paths));
}

TEST_CASE("policy keys: a policy with no rules keeps no keys")
{
    auto decoded = decode_keys(encode_keys(keys_of(compile_policy(parse_policy("{}"), cgroup, 1))), cgroup);
    REQUIRE(decoded);
    CHECK(decoded->net4.empty());
    CHECK(decoded->net6.empty());
    CHECK(decoded->paths.empty());
}

TEST_CASE("policy keys: damaged or foreign records are refused")
{
    std::string data = encode_keys(sample_keys());
    CHECK_FALSE(decode_keys("", cgroup));
    CHECK_FALSE(decode_keys(std::string_view(data).substr(0, data.size() - 1), cgroup)); // truncated
    CHECK_FALSE(decode_keys(data + "x", cgroup));
    CHECK_FALSE(decode_keys(data, cgroup + 1)); // another container's file

    std::string other_version = data;
    other_version[0] ^= 0x7f;
    CHECK_FALSE(decode_keys(other_version, cgroup));

    // A key of another cgroup inside a record that claims this one: never deleted.
    PolicyKeys keys = sample_keys();
    keys.paths.back().cgroup_id = cgroup + 1;
    CHECK_FALSE(decode_keys(encode_keys(keys), cgroup));
    keys = sample_keys();
    keys.net4.back().cgroup_lo += 1;
    CHECK_FALSE(decode_keys(encode_keys(keys), cgroup));
}
