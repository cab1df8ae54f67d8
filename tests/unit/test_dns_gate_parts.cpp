// SPDX-License-Identifier: Apache-2.0
// The DNS gate's three parts apart from its event loop: TCP framing, the
// table of queries waiting for a nameserver, and the admission of an
// answer's addresses (into a map of the gate's layout made for the test),
// within each container's bound.
#include "dns/dns_admission.hpp"
#include "dns/dns_limits.hpp"
#include "dns/dns_pending.hpp"
#include "dns/dns_transport.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <doctest/doctest.h>

#include <bpf/bpf.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

using namespace cerberus;
using namespace cerberus::dns;

namespace {

std::vector<uint8_t> bytes(const std::string& text)
{
    return std::vector<uint8_t>(text.begin(), text.end());
}

Address ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    return Address{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}

UniqueFd test_names_map()
{
    return UniqueFd(bpf_map_create(BPF_MAP_TYPE_HASH, "cerb_test_names", kernel::names_map.key_size,
                                   kernel::names_map.value_size, 64, nullptr));
}

bool in_map(int map, uint64_t cgroup_id, const Address& address)
{
    cerb_name_key key{.cgroup_id = cgroup_id, .addr = {}};
    std::copy(address.begin(), address.end(), key.addr);
    cerb_name_value value{};
    return bpf_map_lookup_elem(map, &key, &value) == 0;
}

Pending udp_query(uint64_t cgroup_id)
{
    Pending pending;
    pending.cgroup_id = cgroup_id;
    pending.client.udp_fd = 3;
    return pending;
}

} // namespace

TEST_CASE("dns transport: a message framed is read back whole, from any pieces, one message at a time")
{
    std::vector<uint8_t> stream = frame(bytes("first"));
    std::vector<uint8_t> second = frame(bytes("second message"));
    stream.insert(stream.end(), second.begin(), second.end());
    CHECK(stream[0] == 0);
    CHECK(stream[1] == 5);
    FrameReader reader(1024);
    for (size_t i = 0; i < stream.size(); ++i) {
        REQUIRE(reader.append(std::span(&stream[i], 1)));
        if (i < 6)
            CHECK_FALSE(reader.next()); // the first is whole only with its fifth byte after the length
    }
    CHECK(reader.next() == bytes("first"));
    CHECK(reader.next() == bytes("second message"));
    CHECK_FALSE(reader.next());
}

TEST_CASE("dns transport: a stream past the reader's limit is refused; one within it is taken")
{
    FrameReader reader(10);
    CHECK(reader.append(bytes("0123456789")));
    CHECK_FALSE(reader.append(bytes("x")));
}

TEST_CASE("dns transport: read_stream tells more, again and closed apart")
{
    int fds[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) == 0);
    UniqueFd reader_end(fds[0]), writer_end(fds[1]);
    FrameReader reader(64);
    CHECK(read_stream(reader_end.get(), reader) == StreamRead::again);
    std::vector<uint8_t> framed = frame(bytes("query"));
    REQUIRE(write(writer_end.get(), framed.data(), framed.size()) == static_cast<ssize_t>(framed.size()));
    CHECK(read_stream(reader_end.get(), reader) == StreamRead::more);
    CHECK(reader.next() == bytes("query"));
    writer_end.reset();
    CHECK(read_stream(reader_end.get(), reader) == StreamRead::closed);
}

TEST_CASE("dns pending: a container has at most its share waiting; the others are not held up")
{
    PendingTable table(3);
    for (int i = 0; i < 3; ++i)
        CHECK(table.add(udp_query(7)));
    CHECK_FALSE(table.add(udp_query(7)));
    CHECK(table.add(udp_query(8)));
    CHECK(table.waiting(7) == 3);
    CHECK(table.waiting(8) == 1);
}

TEST_CASE("dns limits: a bucket gives its burst at once, then its rate, and never more than its burst")
{
    TokenBucket bucket(10, 3); // 10 a second, 3 at once
    auto start = TokenBucket::Clock::now();
    for (int i = 0; i < 3; ++i)
        CHECK(bucket.take(start));
    CHECK_FALSE(bucket.take(start));
    CHECK_FALSE(bucket.take(start + std::chrono::milliseconds(50))); // half a token came back
    CHECK(bucket.take(start + std::chrono::milliseconds(100)));      // control: a whole one
    auto later = start + std::chrono::seconds(60); // a long pause fills it to its burst only
    for (int i = 0; i < 3; ++i)
        CHECK(bucket.take(later));
    CHECK_FALSE(bucket.take(later));
}

TEST_CASE("dns pending: an answer finds its query by the gate's id, per container, and a removed one is gone")
{
    PendingTable table(300);
    std::set<uint16_t> ids;
    std::vector<uint64_t> keys;
    for (int i = 0; i < 256; ++i) {
        auto key = table.add(udp_query(7));
        REQUIRE(key);
        keys.push_back(*key);
        ids.insert(table.find(*key)->gate_id);
    }
    CHECK(ids.size() == 256); // no two waiting queries of one container share an id
    uint16_t id = table.find(keys[10])->gate_id;
    CHECK(table.by_gate_id(7, id) == keys[10]);
    CHECK_FALSE(table.by_gate_id(8, id)); // another container's answer with the same id
    REQUIRE(table.remove(keys[10]));
    CHECK_FALSE(table.by_gate_id(7, id));
    CHECK_FALSE(table.remove(keys[10]));
    CHECK(table.waiting(7) == 255);
}

TEST_CASE("dns pending: a TCP query is not found by id, and its removal leaves a UDP query of the same id")
{
    PendingTable table(70000);
    Pending tcp = udp_query(7);
    tcp.client.tcp_conn = 1;
    auto tcp_key = table.add(std::move(tcp));
    REQUIRE(tcp_key);
    uint16_t tcp_id = table.find(*tcp_key)->gate_id;
    CHECK_FALSE(table.by_gate_id(7, tcp_id));
    // UDP queries until one draws the TCP query's id (ids are random, unique among UDP ones).
    std::optional<uint64_t> same;
    for (int i = 0; i < 65536 && !same; ++i) {
        auto key = table.add(udp_query(7));
        REQUIRE(key);
        if (table.find(*key)->gate_id == tcp_id)
            same = key;
    }
    REQUIRE(same);
    table.remove(*tcp_key);
    CHECK(table.by_gate_id(7, tcp_id) == same);
}

TEST_CASE("dns pending: queries fall due at their deadline; a container's go with it")
{
    PendingTable table(10);
    auto now = Clock::now();
    Pending early = udp_query(7), late = udp_query(7), other = udp_query(8);
    early.deadline = now - std::chrono::seconds(1);
    late.deadline = now + std::chrono::seconds(5);
    other.deadline = now - std::chrono::seconds(1);
    auto early_key = table.add(std::move(early));
    table.add(std::move(late));
    auto other_key = table.add(std::move(other));
    CHECK(table.due(now) == std::vector<uint64_t>{*early_key, *other_key});
    CHECK(table.remove_container(7).size() == 2);
    CHECK(table.waiting(7) == 0);
    CHECK(table.due(now) == std::vector<uint64_t>{*other_key});
}

TEST_CASE("dns admission: an answer's public addresses are admitted with the name's ports until their TTL")
{
    UniqueFd map = test_names_map();
    REQUIRE(map);
    AdmittedTable table(std::move(map));
    const uint64_t now = boot_now_ns();
    std::vector<policy::PortRange> ports{{443, 443}};
    std::vector<AddressRecord> records{{ipv4(192, 0, 2, 10), 60}, {ipv4(10, 1, 2, 3), 60}, {ipv4(198, 51, 100, 7), 1}};
    AnswerAdmission first = admit_answer(table, 7, {}, "api.example.com", NamePorts{ports, {}}, records, now);
    CHECK(first.shown_changed);
    REQUIRE(first.refused.size() == 1); // a private address the policy does not list
    CHECK(first.refused[0].first == ipv4(10, 1, 2, 3));
    CHECK(first.refused[0].second.find("10.0.0.0/8") != std::string::npos);
    auto admitted = table.of(7);
    REQUIRE(admitted.size() == 2);
    for (const auto& entry : admitted) {
        CHECK(entry.name == "api.example.com");
        CHECK(ports_text(entry.value.ports) == "443");
        uint64_t ttl = entry.address == ipv4(192, 0, 2, 10) ? 60 : min_ttl_seconds; // 1 s clamped up
        CHECK(entry.value.expires_ns == now + ttl * 1000000000ULL);
    }
    CHECK(table.of(8).empty());
    // The same answer again only moves expiries: no new snapshot is due for it.
    AnswerAdmission again = admit_answer(table, 7, {}, "api.example.com", NamePorts{ports, {}}, records, now + 1000);
    CHECK_FALSE(again.shown_changed);
    CHECK(again.expiry_only);
    // Listed in the policy's networks, the private address is admitted too.
    policy::Cidr ten = *policy::parse_host_rule("10.0.0.0/8", "test").network;
    AnswerAdmission listed = admit_answer(table, 7, {ten}, "api.example.com", NamePorts{ports, {}}, records, now);
    CHECK(listed.refused.empty());
    CHECK(table.of(7).size() == 3);
    table.forget(7);
    CHECK(table.of(7).empty());
}

TEST_CASE("dns admission: a container holds at most its bound of name-address pairs; a new one over it is refused")
{
    UniqueFd map = test_names_map();
    REQUIRE(map);
    int map_fd = map.get();
    AdmittedTable table(std::move(map), 4);
    const uint64_t now = boot_now_ns();
    NamePorts ports{{{443, 443}}, {}};
    auto admit = [&](uint64_t cgroup, const std::string& name, const Address& address, uint64_t at) {
        return admit_answer(table, cgroup, {}, name, ports, {{address, 60}}, at);
    };
    const Address one = ipv4(192, 0, 2, 1), two = ipv4(192, 0, 2, 2), three = ipv4(192, 0, 2, 3),
                  four = ipv4(192, 0, 2, 4);
    CHECK(admit(7, "a.example.com", one, now).over_bound.empty());
    CHECK(admit(7, "b.example.com", one, now).over_bound.empty()); // a second name of an address is a pair too
    CHECK(admit(7, "c.example.com", two, now).over_bound.empty());
    const uint64_t long_ago = now - 600 * 1000000000ULL; // expired by now
    CHECK(admit(7, "d.example.com", three, long_ago).over_bound.empty());
    CHECK(table.of(7).size() == 4);

    AnswerAdmission address_over = admit(7, "e.example.com", four, now);
    CHECK(address_over.refused.empty());
    REQUIRE(address_over.over_bound == std::vector<Address>{four});
    CHECK_FALSE(address_over.shown_changed);
    CHECK_FALSE(in_map(map_fd, 7, four)); // nothing written past the bound
    AnswerAdmission name_over = admit(7, "e.example.com", one, now);
    REQUIRE(name_over.over_bound == std::vector<Address>{one});
    CHECK(table.names_at(7, one) == std::set<std::string>{"a.example.com", "b.example.com"});
    // Control: what the container holds is renewed at the bound, and another container is not held up by it.
    AnswerAdmission renewed = admit(7, "a.example.com", one, now + 1000000000ULL);
    CHECK(renewed.over_bound.empty());
    CHECK(renewed.expiry_only);
    CHECK(admit(8, "e.example.com", four, now).over_bound.empty());
    CHECK(in_map(map_fd, 8, four));

    // An expired pair makes room.
    CHECK(table.expire(boot_now_ns()) == std::set<uint64_t>{7});
    CHECK(admit(7, "e.example.com", four, now).over_bound.empty());
    CHECK(in_map(map_fd, 7, four));
    CHECK(table.of(7).size() == 4);
}

TEST_CASE("dns admission: an agent asking distinct names under a wildcard stops at the container's bound")
{
    UniqueFd map = test_names_map();
    REQUIRE(map);
    AdmittedTable table(std::move(map));
    CHECK(table.max_per_container() == CERB_MAX_NAME_ADDRESSES / 16);
    const uint64_t now = boot_now_ns();
    NamePorts ports{{{443, 443}}, {}};
    const std::vector<AddressRecord> wildcard{{ipv4(192, 0, 2, 9), 60}};
    size_t refused = 0;
    for (size_t i = 0; i < max_admitted_per_container + 100; ++i)
        refused += admit_answer(table, 7, {}, "x" + std::to_string(i) + ".example.com", ports, wildcard, now)
                       .over_bound.size();
    CHECK(refused == 100);
    CHECK(table.of(7).size() == max_admitted_per_container);
    CHECK(table.names_at(7, ipv4(192, 0, 2, 9)).size() == max_admitted_per_container);
    // Control: another container's name is admitted beside it.
    CHECK(admit_answer(table, 8, {}, "x0.example.com", ports, wildcard, now).over_bound.empty());
    CHECK(table.of(8).size() == 1);
}
