// SPDX-License-Identifier: Apache-2.0
// The DNS gate's answer cache: how long an answer is kept (TTLs, RFC 2308's
// negative answers), its TTLs lowered when given back, expiry, its key, its
// bounds; and that a cached answer is admitted for the container that asks,
// by that container's rules, never by the one whose query filled the cache.
#include "dns/dns_admission.hpp"
#include "dns/dns_cache.hpp"
#include "dns_messages.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <doctest/doctest.h>

#include <bpf/bpf.h>

#include <string>
#include <vector>

using namespace cerberus;
using namespace cerberus::dns;

namespace {

constexpr uint64_t second = 1000000000ULL;
constexpr uint64_t t0 = 5000 * second;

std::vector<uint32_t> ttls(const std::vector<uint8_t>& message)
{
    auto answer = parse_answer(message);
    REQUIRE(answer);
    std::vector<uint32_t> out;
    for (const auto& record : answer->addresses)
        out.push_back(record.ttl);
    return out;
}

std::vector<uint8_t> two_addresses(const char* name = "api.example.com")
{
    AnswerBuilder b(7, name, ns_t_a);
    b.address(name, AF_INET, "192.0.2.10", 60);
    b.address(name, AF_INET, "192.0.2.11", 30);
    return b.bytes;
}

std::string key_of(const char* name, int type = ns_t_a, const std::string& upstream = "net:[1] 192.0.2.53:53")
{
    auto shape = query_shape(make_query(name, type));
    REQUIRE(shape);
    return cache_key(upstream, *shape);
}

// The query with an OPT record: its UDP size, DO bit, and options (bytes).
std::vector<uint8_t> with_edns(std::vector<uint8_t> query, uint16_t udp, bool dnssec_ok,
                               const std::vector<uint8_t>& options = {})
{
    query[11] = 1; // ARCOUNT
    query.insert(query.end(), {0, 0, 41, uint8_t(udp >> 8), uint8_t(udp), 0, 0, uint8_t(dnssec_ok ? 0x80 : 0), 0,
                               0, uint8_t(options.size())});
    query.insert(query.end(), options.begin(), options.end());
    return query;
}

UniqueFd names_map()
{
    UniqueFd map(bpf_map_create(BPF_MAP_TYPE_HASH, "cerb_test_names", kernel::names_map.key_size,
                                kernel::names_map.value_size, 64, nullptr));
    REQUIRE(map);
    return map;
}

} // namespace

TEST_CASE("dns cache: an answer is kept for its least TTL, given back with every TTL lowered, then asked again")
{
    CHECK(cache_seconds(two_addresses()) == 30u);
    AnswerCache cache;
    std::string key = key_of("api.example.com");
    REQUIRE(cache.store(key, two_addresses(), t0));
    auto soon = cache.lookup(key, t0 + second + second / 2);
    REQUIRE(soon);
    CHECK(ttls(*soon) == std::vector<uint32_t>{58, 28}); // 1.5 s kept counts as 2: never more than is left
    auto late = cache.lookup(key, t0 + 28 * second + second / 2);
    REQUIRE(late);
    CHECK(ttls(*late) == std::vector<uint32_t>{31, 1});
    // Expired: the query goes to the nameserver, and the entry is gone.
    CHECK_FALSE(cache.lookup(key, t0 + 29 * second + 1));
    CHECK(cache.entries() == 0);
    CHECK(cache.bytes() == 0);
    // Control: a key never stored is not answered either.
    CHECK_FALSE(cache.lookup(key_of("other.example.com"), t0));
}

TEST_CASE("dns cache: negative answers are kept by their SOA (RFC 2308), not without one")
{
    AnswerBuilder nxdomain(1, "gone.example.com", ns_t_a, ns_r_nxdomain);
    nxdomain.soa("example.com", 300, 60);
    CHECK(cache_seconds(nxdomain.bytes) == 60u); // MINIMUM below the SOA's TTL
    AnswerBuilder short_soa(1, "gone.example.com", ns_t_a, ns_r_nxdomain);
    short_soa.soa("example.com", 40, 600);
    CHECK(cache_seconds(short_soa.bytes) == 40u); // the SOA's TTL below MINIMUM
    AnswerBuilder nodata(1, "api.example.com", ns_t_aaaa);
    nodata.soa("example.com", 300, 120);
    CHECK(cache_seconds(nodata.bytes) == 120u); // NOERROR and no answer: NODATA
    AnswerBuilder long_soa(1, "gone.example.com", ns_t_a, ns_r_nxdomain);
    long_soa.soa("example.com", 86400, 86400);
    CHECK(cache_seconds(long_soa.bytes) == cache_max_negative_seconds);
    // Controls: not kept at all.
    CHECK_FALSE(cache_seconds(AnswerBuilder(1, "gone.example.com", ns_t_a, ns_r_nxdomain).bytes)); // no SOA
    CHECK_FALSE(cache_seconds(AnswerBuilder(1, "api.example.com", ns_t_a, ns_r_servfail).bytes));
    AnswerBuilder truncated(1, "api.example.com", ns_t_a);
    truncated.address("api.example.com", AF_INET, "192.0.2.10", 60);
    truncated.bytes[2] |= 0x02; // TC
    CHECK_FALSE(cache_seconds(truncated.bytes));
    AnswerBuilder zero(1, "api.example.com", ns_t_a);
    zero.address("api.example.com", AF_INET, "192.0.2.10", 0);
    CHECK_FALSE(cache_seconds(zero.bytes));
    AnswerBuilder day(1, "api.example.com", ns_t_a);
    day.address("api.example.com", AF_INET, "192.0.2.10", 86400);
    CHECK(cache_seconds(day.bytes) == cache_max_seconds);

    // The SOA's TTL is lowered as the records' are, and a negative answer expires by it.
    AnswerCache cache;
    std::string key = key_of("gone.example.com");
    REQUIRE(cache.store(key, nxdomain.bytes, t0));
    auto kept = cache.lookup(key, t0 + 10 * second);
    REQUIRE(kept);
    ns_msg handle{};
    REQUIRE(ns_initparse(kept->data(), int(kept->size()), &handle) == 0);
    CHECK(ns_msg_getflag(handle, ns_f_rcode) == ns_r_nxdomain);
    ns_rr soa{};
    REQUIRE(ns_parserr(&handle, ns_s_ns, 0, &soa) == 0);
    CHECK(ns_rr_ttl(soa) == 290u);
    CHECK_FALSE(cache.lookup(key, t0 + 60 * second));
}

TEST_CASE("dns cache: the key is the upstream, the question and the bits an answer depends on")
{
    CHECK(key_of("api.example.com") == key_of("API.Example.com."));
    CHECK(key_of("api.example.com") != key_of("api.example.com", ns_t_aaaa));
    // The same name of another upstream (another namespace, other nameservers) is another answer.
    CHECK(key_of("api.example.com") != key_of("api.example.com", ns_t_a, "net:[2] 192.0.2.53:53"));
    auto plain = query_shape(make_query("api.example.com", ns_t_a));
    REQUIRE(plain);
    CHECK(plain->udp_limit == 512u);
    auto edns = query_shape(with_edns(make_query("api.example.com", ns_t_a), 1232, false));
    REQUIRE(edns);
    CHECK(edns->udp_limit == 1232u);
    auto dnssec = query_shape(with_edns(make_query("api.example.com", ns_t_a), 1232, true));
    REQUIRE(dnssec);
    CHECK(plain->flags != edns->flags);
    CHECK(edns->flags != dnssec->flags);
    std::vector<uint8_t> no_recursion = make_query("api.example.com", ns_t_a);
    no_recursion[2] &= uint8_t(~0x01);
    CHECK(query_shape(no_recursion)->flags != plain->flags);
    // A cookie (option 10) is answered by the nameserver, never from the cache.
    CHECK_FALSE(query_shape(with_edns(make_query("api.example.com", ns_t_a), 1232, false,
                                      {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8})));
}

TEST_CASE("dns cache: bounded in entries and bytes, the least recently used evicted first")
{
    AnswerCache cache(2, 1 << 20);
    REQUIRE(cache.store(key_of("a.example.com"), two_addresses("a.example.com"), t0));
    REQUIRE(cache.store(key_of("b.example.com"), two_addresses("b.example.com"), t0));
    REQUIRE(cache.lookup(key_of("a.example.com"), t0)); // a is now the more recent
    REQUIRE(cache.store(key_of("c.example.com"), two_addresses("c.example.com"), t0));
    CHECK(cache.entries() == 2);
    CHECK(cache.lookup(key_of("a.example.com"), t0));
    CHECK(cache.lookup(key_of("c.example.com"), t0));
    CHECK_FALSE(cache.lookup(key_of("b.example.com"), t0));

    size_t one = two_addresses("a.example.com").size();
    AnswerCache small(100, 2 * one + 1);
    for (const char* name : {"a.example.com", "b.example.com", "c.example.com"})
        REQUIRE(small.store(key_of(name), two_addresses(name), t0));
    CHECK(small.entries() == 2);
    CHECK(small.bytes() <= 2 * one + 1);
    CHECK_FALSE(small.lookup(key_of("a.example.com"), t0));

    AnswerBuilder big(1, "big.example.com", ns_t_a);
    for (int i = 0; i < 300; ++i)
        big.address("big.example.com", AF_INET, "192.0.2.10", 60);
    REQUIRE(big.bytes.size() > cache_max_message);
    CHECK_FALSE(cache.store(key_of("big.example.com"), big.bytes, t0));
}

TEST_CASE("dns cache: an upstream no container uses any more is forgotten, and only it")
{
    AnswerCache cache;
    REQUIRE(cache.store(key_of("api.example.com", ns_t_a, "net:[1] 192.0.2.53:53"), two_addresses(), t0));
    REQUIRE(cache.store(key_of("api.example.com", ns_t_a, "net:[2] 192.0.2.53:53"), two_addresses(), t0));
    cache.forget_upstream("net:[1] 192.0.2.53:53");
    CHECK_FALSE(cache.lookup(key_of("api.example.com", ns_t_a, "net:[1] 192.0.2.53:53"), t0));
    CHECK(cache.lookup(key_of("api.example.com", ns_t_a, "net:[2] 192.0.2.53:53"), t0));
}

TEST_CASE("dns cache: a cached answer goes back with the query's id and spelling, and no AA")
{
    std::vector<uint8_t> answer = two_addresses("api.example.com");
    answer[2] |= 0x04; // AA
    std::vector<uint8_t> query = make_query("API.Example.COM", ns_t_a, 0x4242);
    answer_for(answer, query);
    auto parsed = parse_answer(answer);
    REQUIRE(parsed);
    CHECK(parsed->id == 0x4242);
    CHECK((answer[2] & 0x04) == 0);
    CHECK(std::string(answer.begin() + 13, answer.begin() + 16) == "API");
    CHECK(parsed->addresses.size() == 2);
}

NamePorts direct_on(uint16_t port)
{
    return {{{port, port}}, {}};
}

TEST_CASE("dns cache: a cached answer is admitted for the container that asks, by its own rules")
{
    AdmittedTable table(names_map());
    AnswerBuilder b(7, "api.example.com", ns_t_a);
    b.address("api.example.com", AF_INET, "192.0.2.10", 60);
    b.address("api.example.com", AF_INET, "10.1.2.3", 60);
    AnswerCache cache;
    std::string key = key_of("api.example.com");
    // Container 7's query filled the cache: admitted on 443, the private address refused.
    REQUIRE(cache.store(key, b.bytes, t0));
    auto first = admit_answer(table, 7, {}, "api.example.com", direct_on(443), parse_answer(b.bytes)->addresses, t0);
    CHECK(first.refused.size() == 1);
    // Container 8 asks later and is answered from the cache: its ports, its networks.
    auto cached = cache.lookup(key, t0 + 3 * second);
    REQUIRE(cached);
    policy::Cidr ten = *policy::parse_host_rule("10.0.0.0/8", "test").network;
    auto second_admission = admit_answer(table, 8, {ten}, "api.example.com", direct_on(80),
                                         parse_answer(*cached)->addresses, t0 + 3 * second);
    CHECK(second_admission.refused.empty());
    auto of8 = table.of(8);
    REQUIRE(of8.size() == 2);
    for (const auto& entry : of8)
        CHECK(ports_text(entry.value.ports) == "80");
    // Container 7's entries are its own still: one address, port 443 only.
    auto of7 = table.of(7);
    REQUIRE(of7.size() == 1);
    CHECK(ports_text(of7[0].value.ports) == "443");
    // Control: a container that never asked has nothing.
    CHECK(table.of(9).empty());
    // Asked again from the cache, nothing changes (no map write, no snapshot due); a fresh answer moves the expiry.
    auto again = admit_answer(table, 7, {}, "api.example.com", direct_on(443), parse_answer(*cached)->addresses,
                              t0 + 3 * second);
    CHECK_FALSE(again.shown_changed);
    CHECK_FALSE(again.expiry_only);
    auto fresh = admit_answer(table, 7, {}, "api.example.com", direct_on(443), parse_answer(b.bytes)->addresses,
                              t0 + 3 * second);
    CHECK(fresh.expiry_only);
}

TEST_CASE("dns admission: an allowed_http host's addresses are admitted for the proxy, apart from direct ports")
{
    AdmittedTable table(names_map());
    AnswerBuilder b(7, "api.example.com", ns_t_a);
    b.address("api.example.com", AF_INET, "192.0.2.10", 60);
    auto records = parse_answer(b.bytes)->addresses;
    uint64_t now = boot_now_ns(); // the table merges with the map's live entry, judged by the clock
    admit_answer(table, 7, {}, "api.example.com", NamePorts{{}, {{443, 443}}}, records, now);
    auto admitted = table.of(7);
    REQUIRE(admitted.size() == 1);
    CHECK(ports_text(admitted[0].value.proxied) == "443");
    CHECK(ports_text(admitted[0].value.ports).empty()); // never reached directly
    // Another name on the same address, reached directly on 22: the entry carries both, each its own.
    admit_answer(table, 7, {}, "ssh.example.com", direct_on(22), records, now);
    admitted = table.of(7);
    REQUIRE(admitted.size() == 2);
    CHECK(ports_text(admitted[0].value.proxied) == "443");
    CHECK(ports_text(admitted[0].value.ports) == "22");
    // The names admitted for the address, as the proxy checks a TLS server name against them.
    Address address = admitted[0].address;
    CHECK(table.names_at(7, address) == std::set<std::string>{"api.example.com", "ssh.example.com"});
    CHECK(table.names_at(8, address).empty()); // control: another container's
}

TEST_CASE("dns: the name index answers as ports_for does, whatever the rules")
{
    std::vector<NameRule> rules{{"api.example.com", {{443, 443}}},
                                {"*.example.com", {{80, 80}}},
                                {"*.b.example.com", {{8080, 8080}}},
                                {"other.test", {{1, 100}}},
                                {"api.example.com", {{8443, 8443}}}};
    NameIndex index(rules);
    for (const char* name : {"api.example.com", "b.example.com", "x.b.example.com", "y.x.b.example.com",
                             "example.com", "other.test", "x.other.test", "com", "api.example.com.evil"})
        CHECK_MESSAGE(index.ports(name) == ports_for(rules, name), name);
    CHECK(index.ports("x.b.example.com") == std::vector<policy::PortRange>{{80, 80}, {8080, 8080}});
    CHECK(index.ports("example.com").empty()); // a wildcard never matches its parent
    CHECK(index.ports("api.example.com") == std::vector<policy::PortRange>{{80, 80}, {443, 443}, {8443, 8443}});
}
