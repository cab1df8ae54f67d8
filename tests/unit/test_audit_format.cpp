// SPDX-License-Identifier: Apache-2.0
#include "audit/audit_format.hpp"

#include <doctest/doctest.h>

#include <netinet/in.h>

#include <cstring>

using namespace cerberus::audit;

namespace {

cerb_event base_event(uint16_t op, uint16_t rule, int err)
{
    cerb_event e{};
    e.time_ns = 5'000'000'123; // 5 s after boot
    e.cgroup_id = 77;
    e.pid = 42;
    e.tid = 43;
    e.uid = 1000;
    e.gid = 1001;
    std::strcpy(e.comm, "python3");
    e.op = op;
    e.rule = rule;
    e.err = err;
    e.verdict = CERB_VERDICT_DENIED;
    return e;
}

cerb_event path_event(uint16_t op, uint16_t rule, const char* path, uint16_t rule_len = 0)
{
    cerb_event e = base_event(op, rule, 13);
    e.target_kind = CERB_TARGET_PATH;
    e.path_len = static_cast<uint32_t>(std::strlen(path));
    std::memcpy(e.path, path, e.path_len);
    e.rule_len = rule_len;
    return e;
}

// python3's connect to 203.0.113.9:443, refused.
cerb_event connect_event()
{
    cerb_event e = base_event(CERB_OP_CONNECT, CERB_RULE_NOT_IN_ALLOWED_HOSTS, 1);
    e.target_kind = CERB_TARGET_ADDRESS;
    e.family = AF_INET;
    e.port = 443;
    const uint8_t addr[4] = {203, 0, 113, 9};
    std::memcpy(e.addr, addr, 4);
    return e;
}

// 2024-05-01T12:03:04Z minus the 5 s of boot time in base_event.
constexpr int64_t boot_offset = 1714565000LL * 1000000000 - 5'000'000'000;

} // namespace

TEST_CASE("audit: a denied IPv4 connect becomes one JSON line with every field")
{
    auto j = event_json(connect_event(), {"agent-7", "/usr/bin/python3", boot_offset});
    CHECK(dump_line(j) ==
          R"({"type":"denial","time":"2024-05-01T12:03:20.000000123Z","id":"agent-7","pid":42,"tid":43,)"
          R"("comm":"python3","exe":"/usr/bin/python3","uid":1000,"gid":1001,"op":"connect",)"
          R"("target":"203.0.113.9:443","verdict":"denied","errno":1,"error":"EPERM",)"
          R"("rule":"not in allowed_hosts"})");
    CHECK(text_line(dump_line(j)) == "12:03:20.000 agent-7 python3[42] connect 203.0.113.9:443 DENIED (not in allowed_hosts)");
}

TEST_CASE("audit: a brokered tool's denial says which call it was")
{
    auto j = event_json(connect_event(), {"agent-7", "/usr/bin/python3", boot_offset});
    j["brokered"] = {{"tool", "env"}, {"args", {"python3", "probe.py"}}};
    CHECK(text_line(dump_line(j)) == "12:03:20.000 agent-7 python3[42] connect 203.0.113.9:443 DENIED "
                                     "(not in allowed_hosts), in brokered env python3 probe.py");
}

TEST_CASE("audit: IPv6 targets are bracketed, audit verdicts say so")
{
    cerb_event e = base_event(CERB_OP_SENDMSG, CERB_RULE_NOT_IN_ALLOWED_HOSTS, 1);
    e.verdict = CERB_VERDICT_AUDIT;
    e.target_kind = CERB_TARGET_ADDRESS;
    e.family = AF_INET6;
    e.port = 53;
    e.addr[0] = 0x20;
    e.addr[1] = 0x01;
    e.addr[2] = 0x0d;
    e.addr[3] = 0xb8;
    e.addr[15] = 1;
    auto j = event_json(e, {"c", "", 0});
    CHECK(j["target"] == "[2001:db8::1]:53");
    CHECK(j["op"] == "sendmsg");
    CHECK(j["verdict"] == "audit");
    CHECK(text_line(dump_line(j)).find(" AUDIT (not in allowed_hosts)") != std::string::npos);
}

TEST_CASE("audit: path rules name their list entry")
{
    auto denied = event_json(path_event(CERB_OP_OPEN, CERB_RULE_DENIED_PATH, "/etc/shadow", 11), {"c", "", 0});
    CHECK(denied["target"] == "/etc/shadow");
    CHECK(denied["rule"] == "denied_paths /etc/shadow");
    CHECK(denied["error"] == "EACCES");
    auto read_only = event_json(path_event(CERB_OP_OPEN, CERB_RULE_READ_ONLY_PATH, "/usr/lib/x", 4), {"c", "", 0});
    CHECK(read_only["rule"] == "read_only_paths /usr");
    auto root = event_json(path_event(CERB_OP_OPEN, CERB_RULE_DENIED_PATH, "/x", 0), {"c", "", 0});
    CHECK(root["rule"] == "denied_paths /");
    auto exec = event_json(path_event(CERB_OP_EXEC, CERB_RULE_NOT_IN_ALLOWED_BINS, "/bin/wget"), {"c", "", 0});
    CHECK(exec["op"] == "exec");
    CHECK(exec["rule"] == "not in allowed_bins");
}

TEST_CASE("audit: capabilities, numbers and empty targets")
{
    cerb_event cap = base_event(CERB_OP_CAPABILITY, CERB_RULE_FORBIDDEN_CAP, 1);
    cap.target_kind = CERB_TARGET_CAPABILITY;
    cap.number = 13;
    CHECK(target_text(cap) == "CAP_NET_RAW");
    CHECK(rule_text(cap) == "forbidden_caps CAP_NET_RAW");

    cerb_event sock = base_event(CERB_OP_SOCKET, CERB_RULE_RAW_SOCKET, 1);
    sock.target_kind = CERB_TARGET_NUMBER;
    sock.family = AF_INET;
    sock.number = 3;
    CHECK(target_text(sock) == "family=2 type=3");

    cerb_event userns = base_event(CERB_OP_USERNS, CERB_RULE_ESCALATION, 1);
    CHECK(target_text(userns).empty());
    std::string line = text_line(dump_line(event_json(userns, {"c", "", boot_offset})));
    CHECK(line == "12:03:20.000 c python3[42] userns DENIED (escalation is shut under a policy)");

    CHECK(op_name(999) == "op-999");
    CHECK(op_name(CERB_OP_BPF) == "bpf");
}

TEST_CASE("audit: rerouting options, rerouted packets and refused protocols name what was refused")
{
    cerb_event option = base_event(CERB_OP_SETSOCKOPT, CERB_RULE_REROUTED, 1);
    option.target_kind = CERB_TARGET_NUMBER;
    option.number = 41u << 16 | 57; // SOL_IPV6, IPV6_RTHDR
    CHECK(op_name(option.op) == "setsockopt");
    CHECK(target_text(option) == "level=41 optname=57");
    CHECK(rule_text(option).find("rerouted") == 0);

    cerb_event packet = base_event(CERB_OP_PACKET, CERB_RULE_REROUTED, 1);
    packet.target_kind = CERB_TARGET_ADDRESS;
    packet.family = AF_INET;
    packet.port = 443;
    const uint8_t hop[4] = {127, 0, 0, 1};
    std::memcpy(packet.addr, hop, sizeof(hop));
    CHECK(op_name(packet.op) == "packet");
    CHECK(target_text(packet) == "127.0.0.1:443");

    cerb_event protocol = base_event(CERB_OP_SOCKET, CERB_RULE_PROTOCOL, 1);
    protocol.target_kind = CERB_TARGET_NUMBER;
    protocol.family = AF_INET;
    protocol.number = 262; // IPPROTO_MPTCP
    CHECK(target_text(protocol) == "family=2 protocol=262");
    CHECK(rule_text(protocol) == "only TCP and UDP inet sockets under allowed_hosts");
}

TEST_CASE("audit: binding the DNS port under host names names the address and the rule")
{
    cerb_event bind = base_event(CERB_OP_BIND, CERB_RULE_DNS_PORT, 1);
    bind.target_kind = CERB_TARGET_ADDRESS;
    bind.family = AF_INET;
    bind.port = 53;
    CHECK(op_name(bind.op) == "bind");
    CHECK(target_text(bind) == "0.0.0.0:53");
    CHECK(rule_text(bind) == "the DNS port is the gate's under host names");
}

TEST_CASE("audit: a DNS query with no gate to go to names the address it asked and why it failed")
{
    cerb_event query = base_event(CERB_OP_SENDMSG, CERB_RULE_NO_DNS_GATE, 1);
    query.target_kind = CERB_TARGET_ADDRESS;
    query.family = AF_INET;
    query.port = 53;
    uint8_t resolver[4] = {192, 0, 2, 53};
    std::memcpy(query.addr, resolver, 4);
    CHECK(target_text(query) == "192.0.2.53:53");
    CHECK(rule_text(query) == "no DNS gate serves the container: its queries fail closed");
}

TEST_CASE("audit: the egress proxy's records, a refused request and a refused handshake, as JSON and text")
{
    HttpExchange post{"http", "denied", "api.example.org", "POST", "https://api.example.org/repos/acme/x",
                      "203.0.113.7:443", "not in allowed_http", "", 403};
    auto j = http_json("agent", 0, post);
    CHECK(j["type"] == "http");
    CHECK(j["method"] == "POST");
    CHECK(j["status"] == 403);
    CHECK_FALSE(j.contains("reason"));
    CHECK(text_line(j.dump()).ends_with(
        "agent http POST https://api.example.org/repos/acme/x DENIED (not in allowed_http), 403"));
    HttpExchange fronted{"tls", "denied", "other.example.org", "", "", "203.0.113.7:443", "",
                         "other.example.org was not admitted for 203.0.113.7", 0};
    j = http_json("agent", 0, fronted);
    CHECK_FALSE(j.contains("method")); // a handshake has no request
    CHECK_FALSE(j.contains("status"));
    CHECK(text_line(j.dump()).ends_with(
        "agent tls other.example.org -> 203.0.113.7:443 DENIED: other.example.org was not admitted for 203.0.113.7"));
}

TEST_CASE("audit: bytes that are not UTF-8 do not break the line")
{
    cerb_event e = path_event(CERB_OP_OPEN, CERB_RULE_NOT_IN_ALLOWED_PATHS, "/tmp/\xff\xfe");
    std::string line = dump_line(event_json(e, {"c", "", 0}));
    CHECK(line.find("\"target\":\"/tmp/") != std::string::npos);
    CHECK(line.find('\n') == std::string::npos);
}

TEST_CASE("audit: lost lines and times")
{
    std::string line = dump_line(lost_json("agent-7", 1714565000LL * 1000000000 + 5, 12, 30));
    CHECK(line == R"({"type":"lost","time":"2024-05-01T12:03:20.000000005Z","id":"agent-7","count":12,"total":30})");
    CHECK(text_line(line) == "12:03:20.000 agent-7 LOST 12 events (30 in all)");
    CHECK(rfc3339_ns(0) == "1970-01-01T00:00:00.000000000Z");
    CHECK(text_line("not json") == "not json");
    int64_t offset = boot_to_wall_offset();
    CHECK(offset > 1600000000LL * 1000000000); // the wall clock is well past the boot clock
}

// Found by tests/fuzz (target trail): the boot time plus the clock offset overflowed int64.
TEST_CASE("audit: a boot time past int64 nanoseconds saturates instead of overflowing")
{
    cerb_event e = base_event(CERB_OP_CONNECT, CERB_RULE_NOT_IN_ALLOWED_HOSTS, 1);
    e.time_ns = 8751657888269070971ULL;
    CHECK(event_json(e, {"c", "", 1769218604000000000LL})["time"] == "2262-04-11T23:47:16.854775807Z");
    e.time_ns = UINT64_MAX;
    CHECK(event_json(e, {"c", "", 0})["time"] == "2262-04-11T23:47:16.854775807Z");
    e.time_ns = 5'000'000'123; // control: an ordinary time is unchanged
    CHECK(event_json(e, {"c", "", boot_offset})["time"] == "2024-05-01T12:03:20.000000123Z");
}

TEST_CASE("audit: an open says whether it asked to write, for learn mode")
{
    cerb_event e = path_event(CERB_OP_OPEN, CERB_RULE_NOT_IN_ALLOWED_PATHS, "/data/out");
    e.number = CERB_ACCESS_WRITE;
    CHECK(event_json(e, {"a", "", 0})["access"] == "write");
    e.number = 0;
    CHECK(event_json(e, {"a", "", 0})["access"] == "read");
    // Other operations on paths carry no access field: what they do is in their name.
    CHECK_FALSE(event_json(path_event(CERB_OP_UNLINK, CERB_RULE_NOT_IN_ALLOWED_PATHS, "/x"), {"a", "", 0})
                    .contains("access"));
}

TEST_CASE("audit: the start record names the enforcement, the mode and the policy")
{
    TrailStart start{.enforcement = "bpf-lsm",
                     .policy = {{"mode", "audit"}, {"allowed_hosts", {"192.0.2.1:443"}}}};
    std::string line = dump_line(start_json("agent-7", 1714565000LL * 1000000000, start));
    CHECK(line == R"({"type":"start","time":"2024-05-01T12:03:20.000000000Z","id":"agent-7","enforcement":"bpf-lsm",)"
                  R"("mode":"audit","policy":{"mode":"audit","allowed_hosts":["192.0.2.1:443"]},)"
                  R"("not_reported":[],"why_not_reported":{},"partly_enforced":[]})");
    CHECK(text_line(line) == "12:03:20.000 agent-7 START enforced by bpf-lsm, mode audit");
    start.not_reported = {"exec"};
    CHECK(text_line(dump_line(start_json("a", 0, start))) ==
          "00:00:00.000 a START enforced by bpf-lsm, mode audit, not reported: exec");
}
