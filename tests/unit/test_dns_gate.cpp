// SPDX-License-Identifier: Apache-2.0
// The DNS gate's pure parts: reading queries and answers through libresolv,
// the REFUSED reply, which addresses are admitted with which ports and until
// when, its trail record and its registration file.
#include "audit/audit_format.hpp"
#include "base/fd.hpp"
#include "dns/dns_admission.hpp"
#include "dns/dns_answers.hpp"
#include "dns/dns_gate.hpp"
#include "dns/dns_gate_registry.hpp"
#include "dns_messages.hpp"
#include "policy/policy_check.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <fcntl.h>
#include <resolv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace cerberus;
using namespace cerberus::dns;

namespace {

Address v6(const char* text)
{
    Address address{};
    REQUIRE(inet_pton(AF_INET6, text, address.data()) == 1);
    return address;
}

Address v4(const char* text)
{
    Address address{};
    address[10] = address[11] = 0xff;
    REQUIRE(inet_pton(AF_INET, text, address.data() + 12) == 1);
    return address;
}

policy::Cidr network(const char* text)
{
    return *policy::parse_host_rule(text, "test").network;
}

} // namespace

TEST_CASE("dns: a query made by res_mkquery is read with its id, lower-case name and type")
{
    auto query = parse_query(make_query("API.Example.COM.", ns_t_aaaa, 0x1234));
    REQUIRE(query);
    CHECK(query->id == 0x1234);
    CHECK(query->question == Question{"api.example.com", ns_t_aaaa, ns_c_in});
    CHECK(type_name(ns_t_aaaa) == "AAAA");
    CHECK(type_name(ns_t_txt) == "TXT");
    CHECK(type_name(65280) == "TYPE65280");
    CHECK(type_name(65) == "HTTPS");
}

TEST_CASE("dns: what is not a query with one question is not read as one")
{
    std::vector<uint8_t> truncated = make_query("example.com", ns_t_a);
    truncated.resize(15);
    CHECK_FALSE(parse_query(truncated));
    AnswerBuilder answer(1, "example.com", ns_t_a);
    CHECK_FALSE(parse_query(answer.bytes)); // an answer
    CHECK(parse_answer(answer.bytes)); // control: it is one
    CHECK_FALSE(parse_answer(make_query("example.com", ns_t_a)));
}

TEST_CASE("dns: an answer's addresses are those of the question's name and its CNAME chain")
{
    AnswerBuilder b(7, "api.example.com", ns_t_a);
    b.cname("api.example.com", "edge.cdn.example.net", 300, true);
    b.address("edge.cdn.example.net", AF_INET, "203.0.113.7", 60);
    b.address("EDGE.cdn.example.net", AF_INET6, "2001:db8::7", 1);
    b.address("unrelated.example.org", AF_INET, "198.51.100.1", 60); // no owner of the chain: not the name's address
    auto answer = parse_answer(b.bytes);
    REQUIRE(answer);
    CHECK(answer->id == 7);
    CHECK(answer->rcode == 0);
    CHECK_FALSE(answer->truncated);
    CHECK(answer->question == Question{"api.example.com", ns_t_a, ns_c_in});
    REQUIRE(answer->addresses.size() == 2);
    CHECK(answer->addresses[0] == AddressRecord{v4("203.0.113.7"), 60});
    CHECK(answer->addresses[1] == AddressRecord{v6("2001:db8::7"), 1});
}

TEST_CASE("dns: the REFUSED reply keeps the query's id and question and carries nothing else")
{
    auto query = make_query("evil.example", ns_t_txt, 0xbeef);
    auto reply = refused_reply(query);
    auto answer = parse_answer(reply);
    REQUIRE(answer);
    CHECK(answer->id == 0xbeef);
    CHECK(answer->rcode == ns_r_refused);
    CHECK(answer->question == Question{"evil.example", ns_t_txt, ns_c_in});
    CHECK(answer->addresses.empty());
    ns_msg handle{};
    REQUIRE(ns_initparse(reply.data(), int(reply.size()), &handle) == 0);
    CHECK(ns_msg_count(handle, ns_s_an) == 0);
    CHECK(ns_msg_getflag(handle, ns_f_rd) == 1); // res_mkquery asks for recursion; the reply says it was asked
    CHECK(refused_reply(std::vector<uint8_t>(5, 0)).empty());
}

TEST_CASE("dns: the SERVFAIL reply is the REFUSED one with its own rcode")
{
    auto query = make_query("busy.example", ns_t_a, 0x1234);
    auto answer = parse_answer(error_reply(query, ns_r_servfail));
    REQUIRE(answer);
    CHECK(answer->id == 0x1234);
    CHECK(answer->rcode == ns_r_servfail);
    CHECK(answer->question == Question{"busy.example", ns_t_a, ns_c_in});
}

TEST_CASE("dns: a malformed query is answered FORMERR by its header; a reply or a fragment is not answered")
{
    auto query = make_query("evil.example", ns_t_a, 0xcafe);
    std::vector<uint8_t> cut(query.begin(), query.begin() + 14); // the header, and a question cut short
    CHECK_FALSE(parse_query(cut));
    auto reply = formerr_reply(cut);
    REQUIRE(reply.size() == 12);
    ns_msg handle{};
    REQUIRE(ns_initparse(reply.data(), int(reply.size()), &handle) == 0);
    CHECK(ns_msg_id(handle) == 0xcafe);
    CHECK(ns_msg_getflag(handle, ns_f_qr) == 1);
    CHECK(ns_msg_getflag(handle, ns_f_rcode) == ns_r_formerr);
    CHECK(ns_msg_count(handle, ns_s_qd) == 0);
    CHECK(formerr_reply(reply).empty()); // control: the reply itself is never answered
    CHECK(formerr_reply(std::vector<uint8_t>(11, 0)).empty());
}

// Found by tests/fuzz (fuzz_dns): a query whose question name ends in a compression pointer into its records.
TEST_CASE("dns: a question that points into records the reply leaves out is answered with the name it reads as")
{
    const std::vector<uint8_t> query{
        0x12, 0x34, 0x01, 0x80, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x03, 's', 'v', 'c', 0x0b, 0x04,
        'e', 'd', 'g', 'e', 0x04, 't', 'e', 's', 't', 0x00, 0xc0, 0x26, 0x00, 0x01, 0x5b, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x1e, 0x00, 0x04, 0xc6, 0x33, 0x64, 0x01, 0xc0, 0x26, 0x00, 0x1c, 0x00, 0x01, 0x00, 0x00, 0x00, 0x1e,
        0x00, 0x10, 0x20, 0x01, 0x0d, 0xb8, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x10};
    auto read = parse_query(query); // the whole message reads
    REQUIRE(read);
    auto answer = parse_answer(refused_reply(query));
    REQUIRE(answer);
    CHECK(answer->question == read->question);
    CHECK(answer->rcode == ns_r_refused);
}

TEST_CASE("dns: TTLs are clamped to [2 s, 3600 s]")
{
    CHECK(clamp_ttl_ns(0) == 2'000'000'000ULL);
    CHECK(clamp_ttl_ns(1) == 2'000'000'000ULL);
    CHECK(clamp_ttl_ns(300) == 300'000'000'000ULL);
    CHECK(clamp_ttl_ns(86400) == 3600'000'000'000ULL);
}

TEST_CASE("dns: answers into the host's networks are not admitted unless the policy lists them")
{
    // One address of each range, then the range's description.
    std::istringstream ranges(R"(10.1.2.3 private range 10.0.0.0/8
172.20.0.1 private range 172.16.0.0/12
192.168.1.1 private range 192.168.0.0/16
100.64.0.1 CGNAT range 100.64.0.0/10
127.0.0.1 loopback 127.0.0.0/8
169.254.169.254 link-local 169.254.0.0/16
0.0.0.0 unspecified 0.0.0.0/8
239.1.1.1 multicast 224.0.0.0/4
::1 loopback ::1/128
:: unspecified ::/128
fe80::1 link-local fe80::/10
fd12::1 private range fc00::/7
ff02::1 multicast ff00::/8)");
    for (std::string address, range; ranges >> address && std::getline(ranges, range);)
        CHECK(reserved_range(address.find(':') == std::string::npos ? v4(address.c_str()) : v6(address.c_str())) ==
              range.substr(1));
    // Controls: public addresses, and neighbours of the ranges.
    for (const auto& address : {v4("203.0.113.7"), v4("172.32.0.1"), v4("100.128.0.1"), v6("2001:db8::1"), v6("fec0::1")})
        CHECK_FALSE(reserved_range(address));

    CHECK(refusal(v4("10.1.2.3"), {network("192.168.0.0/16")}) == "private range 10.0.0.0/8");
    CHECK_FALSE(refusal(v4("10.1.2.3"), {network("10.1.0.0/16:443")}));
    CHECK_FALSE(refusal(v4("10.1.2.3"), {network("::ffff:10.0.0.0/104")})); // the mapped form of the range
    CHECK(refusal(v6("fd00::5"), {network("10.0.0.0/8")}) == "private range fc00::/7");
    CHECK_FALSE(refusal(v6("fd00::5"), {network("fd00::/8")}));
    CHECK_FALSE(refusal(v4("203.0.113.7"), {}));
    CHECK(address_text(v4("10.1.2.3")) == "10.1.2.3");
    CHECK(address_text(v6("2001:db8::1")) == "2001:db8::1");
}

TEST_CASE("dns: an IPv4-mapped IPv6 address is judged as the IPv4 address it carries")
{
    CHECK(reserved_range(v6("::ffff:169.254.169.254")) == "link-local 169.254.0.0/16");
    CHECK(reserved_range(v6("::ffff:127.0.0.1")) == "loopback 127.0.0.0/8");
    CHECK_FALSE(reserved_range(v6("::ffff:203.0.113.7")));
}

TEST_CASE("dns: a name's ports are the union of every rule it matches; no rule, not allowed")
{
    std::vector<NameRule> rules{{"api.example.com", {{443, 443}}},
                                {"*.example.com", {{80, 80}}},
                                {"*.example.com", {{8000, 8100}}},
                                {"other.org", {{22, 22}}}};
    CHECK(ports_for(rules, "api.example.com") ==
          std::vector<policy::PortRange>{{80, 80}, {443, 443}, {8000, 8100}});
    CHECK(ports_for(rules, "a.b.example.com") == std::vector<policy::PortRange>{{80, 80}, {8000, 8100}});
    CHECK(ports_for(rules, "example.com").empty()); // a wildcard never matches its parent
    CHECK(ports_for(rules, "example.com.evil").empty());
    CHECK(ports_for(rules, "xexample.com").empty());
    CHECK(ports_text(net_value(ports_for(rules, "api.example.com"))) == "80,443,8000-8100");
}

TEST_CASE("dns: an address admitted twice keeps the union of ports and the later expiry")
{
    cerb_name_value live{};
    live.expires_ns = 100;
    live.ports = net_value({{443, 443}});
    cerb_name_value fresh{};
    fresh.expires_ns = 50;
    fresh.ports = net_value({{80, 80}, {444, 500}});
    cerb_name_value merged = merge(live, fresh);
    CHECK(merged.expires_ns == 100);
    CHECK(ports_text(merged.ports) == "80,443-500");
    CHECK(merge(fresh, live).expires_ns == 100);
    // The proxied ports are a union of their own, never mixed with the direct ones.
    fresh.proxied = net_value({{8443, 8443}});
    merged = merge(live, fresh);
    CHECK(ports_text(merged.proxied) == "8443");
    CHECK(ports_text(merged.ports) == "80,443-500");
}

TEST_CASE("dns: ports beyond what the map holds are left out, never widened")
{
    std::vector<policy::PortRange> many;
    for (uint16_t port = 1; port <= 20; ++port)
        many.push_back({uint16_t(port * 10), uint16_t(port * 10)});
    cerb_net_value value = net_value(many);
    CHECK(value.nranges == CERB_MAX_PORT_RANGES);
    CHECK(ranges_of(value).back() == policy::PortRange{80, 80});
}

TEST_CASE("dns: the gate's trail record and its line of text")
{
    auto record = audit::dns_json("agent-7", 1'700'000'000'000'000'000,
                                  {"evil.example", "TXT", "refused", "not in allowed_hosts", ""});
    CHECK(record["type"] == "dns");
    CHECK(record["name"] == "evil.example");
    CHECK_FALSE(record.contains("address"));
    std::string line = audit::dump_line(record);
    CHECK(audit::text_line(line).find("agent-7 dns evil.example TXT REFUSED (not in allowed_hosts)") !=
          std::string::npos);
    auto not_admitted = audit::dns_json("agent-7", 0, {"api.example.com", "A", "not admitted",
                                                       "private range 10.0.0.0/8", "10.1.2.3"});
    CHECK(audit::text_line(audit::dump_line(not_admitted)).find("-> 10.1.2.3 NOT ADMITTED") != std::string::npos);
    // learn and check read denials only: a dns record is no action of the agent's.
    CHECK_FALSE(policy::action_of_record(nlohmann::json::parse(line)));
}

TEST_CASE("dns: a registration is written and read back")
{
    Registration registration{"agent-7", 4242, "/var/log/cerberus/agent-7.jsonl", true,
                              {{"*.example.com", {{443, 443}}}}, {"10.0.0.0/8:443"}, {"192.0.2.53:53", "[::1]:53"}};
    Registration back = registration_from_json(nlohmann::json::parse(to_json(registration).dump()));
    CHECK(back.id == registration.id);
    CHECK(back.cgroup_id == 4242);
    CHECK(back.audit);
    REQUIRE(back.names.size() == 1);
    CHECK(back.names[0].pattern == "*.example.com");
    CHECK(back.names[0].ports == std::vector<policy::PortRange>{{443, 443}});
    CHECK(networks_of(back) == std::vector<policy::Cidr>{network("10.0.0.0/8")});
    CHECK(back.nameservers == registration.nameservers);
    // One written before the mode was there reads as enforce (the egress proxy then refuses what the rules do).
    auto without_mode = to_json(registration);
    without_mode.erase("mode");
    CHECK_FALSE(registration_from_json(without_mode).audit);
}

TEST_CASE("dns: the nameservers of a resolv.conf, as glibc reads them")
{
    CHECK(nameservers_of("# Docker\nsearch example.com\nnameserver 127.0.0.11\noptions ndots:0\n") ==
          std::vector<std::string>{"127.0.0.11:53"});
    CHECK(nameservers_of("nameserver 192.0.2.1\nnameserver 2001:db8::53\nnameserver 192.0.2.2\nnameserver 192.0.2.3\n") ==
          std::vector<std::string>{"192.0.2.1:53", "[2001:db8::53]:53", "192.0.2.2:53"});
    CHECK(nameservers_of("").front() == "127.0.0.1:53"); // none: glibc asks the local host
    CHECK(nameservers_of("nameserver not-an-address\n").front() == "127.0.0.1:53");
    auto endpoint = parse_endpoint("[2001:db8::53]:5353");
    REQUIRE(endpoint);
    CHECK(endpoint->family == AF_INET6);
    CHECK(endpoint->port == 5353);
    CHECK_FALSE(parse_endpoint("192.0.2.1:0"));
    CHECK_FALSE(parse_endpoint("192.0.2.1:53x"));
    CHECK_FALSE(parse_endpoint("example.com:53"));
}

TEST_CASE("dns: the container's resolv.conf is read only as a regular file; a FIFO there does not hold create up")
{
    auto rootfs = std::filesystem::temp_directory_path() / ("cerb-resolv-" + std::to_string(getpid()));
    std::filesystem::create_directories(rootfs / "etc");
    REQUIRE(mkfifo((rootfs / "etc/resolv.conf").c_str(), 0644) == 0);
    UniqueFd root(open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    CHECK(container_nameservers(root.get()) == nameservers_of("")); // as if it had none
    // Control: the same path as a regular file is read.
    std::filesystem::remove(rootfs / "etc/resolv.conf");
    std::ofstream(rootfs / "etc/resolv.conf") << "nameserver 192.0.2.53\n";
    CHECK(container_nameservers(root.get()) == std::vector<std::string>{"192.0.2.53:53"});
    std::filesystem::remove_all(rootfs);
}
