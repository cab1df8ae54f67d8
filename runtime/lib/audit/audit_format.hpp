// SPDX-License-Identifier: Apache-2.0
// The audit trail's records: a struct cerb_event from the ring buffer turned
// into one JSON line, and a JSON line turned into one line of text. Pure
// functions; every numeric enum of cerberus_policy.h is named here and only here.
#pragma once

#include "kernel/pinned_maps.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::audit {


// What the collector knows besides the event itself.
struct EventContext {
    std::string container_id;
    std::string exe;             // /proc/<pid>/exe when the event was collected; empty once the process is gone
    int64_t boot_to_wall_ns = 0; // CLOCK_REALTIME minus CLOCK_BOOTTIME
};

// "connect", "open", "exec"...; "op-N" for a number this build does not know.
std::string op_name(uint16_t op);

// Which rule decided: "not in allowed_hosts", "denied_paths /etc/shadow"...
std::string rule_text(const cerb_event& e);

// What the operation was aimed at: "203.0.113.9:443", "[2001:db8::1]:443", a
// path, "CAP_NET_RAW", "family=2 type=3"; empty when there is nothing.
std::string target_text(const cerb_event& e);

// 2024-05-01T12:03:04.123456789Z
std::string rfc3339_ns(int64_t wall_ns);

// CLOCK_REALTIME minus CLOCK_BOOTTIME now, to convert bpf_ktime_get_boot_ns.
int64_t boot_to_wall_offset();

// CLOCK_REALTIME now, the time of a record a daemon writes as it happens.
int64_t wall_now_ns();

// {"type":"denial","time":...,"id":...,"pid":...,...,"rule":...}
nlohmann::ordered_json event_json(const cerb_event& e, const EventContext& ctx);

// Whether e, the record of a call the observer saw fail, is of a refusal Landlock made (EACCES, or EXDEV,
// but at a denied path's cover, which file permissions refuse; every mount), and so one the kernel audit
// log may carry too.
bool refused_by_landlock(const cerb_call_event& call, const cerb_event& e);

// {"type":"lost","time":...,"id":...,"count":N,"total":T}: N more events of
// the container were dropped (T in all), counted by the BPF programs.
nlohmann::ordered_json lost_json(const std::string& id, int64_t wall_ns, uint64_t count, uint64_t total);

// What the DNS gate decided about a query or an answer's address.
struct DnsVerdict {
    std::string name; // the name queried
    std::string qtype; // "A", "AAAA", "TXT"...
    std::string verdict; // "refused", "audit" (refused but for audit mode) or "not admitted"
    std::string rule; // "not in allowed_hosts", "private range 10.0.0.0/8"
    std::string address; // the address not admitted; empty for a query
    // A name ask_hosts asks about (verdict "allowed" or "refused"): how the ask was decided ("once",
    // "for 10m", "always", "deny", "timeout", "grant g-..."), and by whom (none for a timeout, a grant)
    std::string answer;
    std::optional<uint32_t> answered_by;
};

// {"type":"dns","time":...,"id":...,"name":...,"qtype":...,"verdict":...,"rule":...[,"address":...]
// [,"answer":...[,"answered_by":N]]}:
// written by the DNS gate, not the collector.
nlohmann::ordered_json dns_json(const std::string& id, int64_t wall_ns, const DnsVerdict& dns);

// What the egress proxy decided about a connection's TLS handshake (kind
// "tls": its server name) or one of its requests (kind "http").
struct HttpExchange {
    std::string kind;
    std::string verdict; // "allowed", "denied", "audit" (denied but for audit mode), "failed"
    std::string server_name; // the ClientHello's; "" when it carried none
    std::string method; // "" for tls
    std::string url; // "https://host[:port]/path", the query left out; "" for tls
    std::string address; // where the agent connected: "203.0.113.7:443", "[2001:db8::7]:443"
    std::string rule; // `allowed_http[1] "GET https://..."` or `not in allowed_http`
    std::string reason; // why, in words, when refused or failed
    int status = 0; // what the agent got; 0 for tls
    std::string credential; // the host's credential the proxy set on the request (its name); "" for none
};

// {"type":"http","time":...,"id":...,"kind":...,"verdict":...,"server_name":...,["method","url",]"address",
// "rule"[,"reason"][,"status"][,"credential"]}: written by the egress proxy, not the collector.
nlohmann::ordered_json http_json(const std::string& id, int64_t wall_ns, const HttpExchange& exchange);

// One call of a host tool through the command broker, as it decided and ran it.
struct CommandCall {
    std::string tool;
    std::vector<std::string> args; // argv without argv[0]
    std::string cwd;               // the agent's working directory, in the container
    std::string verdict;           // "allowed", "denied", "audit" (denied but for audit mode), "failed"
    std::string backend = "static"; // what decided: the policy's static rules
    std::string rule;              // "commands.git.deny[0] \"push --force *\"", or why it failed
    std::optional<int> status;     // the tool's exit status, when it ran and exited
    std::optional<int> signal;     // the signal that ended it
    std::optional<uint64_t> bytes_in;  // when the tool ran: what the caller's stdin gave it, relayed by the broker
    std::optional<uint64_t> bytes_out; // and what its stdout and stderr gave the caller
    int64_t duration_ms = 0;
    // backend "ask": how the ask was decided ("once", "for 10m", "always", "deny", "timeout", "grant g-..."),
    // and by whom (the answering operator's uid; none for a timeout, a grant, a restart)
    std::string answer;
    std::optional<uint32_t> answered_by;
};

// {"type":"command","time":...,"id":...,"tool":...,"args":[...],"cwd":...,"verdict":...,"backend":...,
// "rule":...[,"status":N][,"signal":N][,"bytes_in":N,"bytes_out":N],"duration_ms":N[,"answer":...
// [,"answered_by":N]]}: written by the command broker.
nlohmann::ordered_json command_json(const std::string& id, int64_t wall_ns, const CommandCall& call);

// A call the policy's commands ask about, held until an operator answers (the
// command record that follows says how it was decided).
struct AskedCall {
    std::string ask_id;
    std::string tool;
    std::vector<std::string> args;
    std::string cwd;
    int64_t pid = 0; // the caller, as the host sees it
    std::string rule;
    int64_t deadline_ns = 0;
};

// {"type":"ask","time":...,"id":...,"tool":...,"args":[...],"cwd":...,"ask":...,"pid":N,"rule":...,
// "deadline":...}: written by the command broker.
nlohmann::ordered_json ask_json(const std::string& id, int64_t wall_ns, const AskedCall& call);

// A lookup of a name ask_hosts asks about, held by the DNS gate until an
// operator answers (the dns record that follows says how it was decided).
struct AskedName {
    std::string ask_id;
    std::string name;
    std::string qtype;
    std::string rule;
    int64_t deadline_ns = 0;
};

// {"type":"ask","time":...,"id":...,"name":...,"qtype":...,"ask":...,"rule":...,"deadline":...}: written by
// the DNS gate.
nlohmann::ordered_json ask_json(const std::string& id, int64_t wall_ns, const AskedName& name);

// What a container's trail says first: the policy it runs under and the
// backend that enforces it, with the rule kinds of the policy whose denials
// that backend cannot report, or carries out only in part (docs/policy.md says how).
struct TrailStart {
    std::string enforcement; // the backend: "bpf-lsm", "fmod-ret" or "landlock"
    std::string passed_over; // under auto, why each stronger backend was not taken ("" none)
    nlohmann::ordered_json policy = nlohmann::ordered_json::object(); // the policy document
    std::vector<std::string> not_reported;
    std::map<std::string, std::string> why_not_reported; // rule kind -> why, for each of not_reported
    std::vector<std::string> partly_enforced;
    bool audit_log = false; // some of its denials come through the kernel audit log (Landlock's), not the ring buffer
    bool calls_observed = false; // the call observer reports each of its refusals through the ring buffer
};

// {"type":"start","time":...,"id":...,"enforcement":...,["passed_over":...,]"mode":...,"policy":{...},
// "not_reported":[...],"why_not_reported":{...},"partly_enforced":[...]}: the first line of each run of the container.
nlohmann::ordered_json start_json(const std::string& id, int64_t wall_ns, const TrailStart& start);

// Compact JSON; bytes that are not UTF-8 (paths may hold any) are replaced.
std::string dump_line(const nlohmann::ordered_json& record);

// One line of text for a trail line, e.g.
// "12:03:04.123 agent-7 python3[42] connect 203.0.113.9:443 DENIED (not in allowed_hosts)",
// "12:03:04.001 agent-7 START enforced by bpf-lsm, mode audit".
// The time is UTC, as in the JSON. Text that is not a record is returned as it is.
std::string text_line(const std::string& json_line);

} // namespace cerberus::audit
