// SPDX-License-Identifier: Apache-2.0
#include "audit/audit_format.hpp"

#include "process/capabilities.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <ctime>

using nlohmann::json;
using nlohmann::ordered_json;

namespace cerberus::audit {
namespace {

std::string upper(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::toupper(c); });
    return text;
}

std::string path_of(const cerb_event& e)
{
    return std::string(e.path, std::min<size_t>(e.path_len, sizeof(e.path) - 1));
}

std::string errno_name(int err)
{
    const char* name = strerrorname_np(err);
    return name ? name : "errno " + std::to_string(err);
}

std::string address_text(const cerb_event& e)
{
    char text[INET6_ADDRSTRLEN] = "";
    if (e.family == AF_INET && inet_ntop(AF_INET, e.addr, text, sizeof(text)))
        return std::string(text) + ":" + std::to_string(e.port);
    if (e.family == AF_INET6 && inet_ntop(AF_INET6, e.addr, text, sizeof(text)))
        return "[" + std::string(text) + "]:" + std::to_string(e.port);
    return "family=" + std::to_string(e.family);
}

std::string number_text(const cerb_event& e)
{
    std::string n = std::to_string(e.number);
    switch (e.op) {
    case CERB_OP_SOCKET:
        return "family=" + std::to_string(e.family) + (e.rule == CERB_RULE_PROTOCOL ? " protocol=" : " type=") + n;
    case CERB_OP_SETSOCKOPT: return "level=" + std::to_string(e.number >> 16) + " optname=" + std::to_string(e.number & 0xffff);
    case CERB_OP_BPF: return "cmd=" + n;
    case CERB_OP_PERF_EVENT: return "type=" + n;
    case CERB_OP_PTRACE:
    case CERB_OP_SIGNAL:
    case CERB_OP_TASK: return "pid=" + n;
    case CERB_OP_KEYRING: return "key=" + n;
    default: return "id=" + n;
    }
}

// What every record but a denial begins with.
ordered_json record_head(const char* type, const std::string& id, int64_t wall_ns)
{
    ordered_json j;
    j["type"] = type;
    j["time"] = rfc3339_ns(wall_ns);
    j["id"] = id;
    return j;
}

} // namespace

std::string op_name(uint16_t op)
{
    switch (op) {
    case CERB_OP_CONNECT: return "connect";
    case CERB_OP_SENDMSG: return "sendmsg";
    case CERB_OP_SOCKET: return "socket";
    case CERB_OP_OPEN: return "open";
    case CERB_OP_EXEC: return "exec";
    case CERB_OP_MMAP_EXEC: return "mmap_exec";
    case CERB_OP_CAPABILITY: return "capability";
    case CERB_OP_BPF: return "bpf";
    case CERB_OP_PERF_EVENT: return "perf_event_open";
    case CERB_OP_MODULE: return "module";
    case CERB_OP_KEXEC: return "kexec";
    case CERB_OP_USERNS: return "userns";
    case CERB_OP_MOUNT: return "mount";
    case CERB_OP_LINK: return "link";
    case CERB_OP_RENAME: return "rename";
    case CERB_OP_UNLINK: return "unlink";
    case CERB_OP_CREATE: return "create";
    case CERB_OP_SETATTR: return "setattr";
    case CERB_OP_PTRACE: return "ptrace";
    case CERB_OP_PACKET: return "packet";
    case CERB_OP_SETSOCKOPT: return "setsockopt";
    case CERB_OP_XATTR: return "xattr";
    case CERB_OP_CHROOT: return "chroot";
    case CERB_OP_BIND: return "bind";
    case CERB_OP_IOCTL: return "ioctl";
    case CERB_OP_IO_URING: return "io_uring_setup";
    case CERB_OP_MEMFD: return "memfd_create";
    case CERB_OP_SIGNAL: return "signal";
    case CERB_OP_TASK: return "task";
    case CERB_OP_KEYRING: return "keyring";
    case CERB_OP_USERFAULTFD: return "userfaultfd";
    }
    return "op-" + std::to_string(op);
}

std::string rule_text(const cerb_event& e)
{
    // The path rules report how long their entry is: it is the start of the path.
    auto entry = [&] {
        std::string path = path_of(e);
        return e.rule_len == 0 ? std::string("/") : path.substr(0, std::min<size_t>(e.rule_len, path.size()));
    };
    switch (e.rule) {
    case CERB_RULE_NOT_IN_ALLOWED_HOSTS: return "not in allowed_hosts";
    case CERB_RULE_ADDRESS_FAMILY: return "address family not allowed";
    case CERB_RULE_RAW_SOCKET: return "raw and packet sockets are refused";
    case CERB_RULE_PING_SOCKET: return "ICMP sockets are refused under allowed_hosts";
    case CERB_RULE_REROUTED: return "rerouted: IP options, a routing header or another destination than checked";
    case CERB_RULE_PROTOCOL: return "only TCP and UDP inet sockets under allowed_hosts";
    case CERB_RULE_NOT_IN_ALLOWED_PATHS: return "not in allowed_paths";
    case CERB_RULE_DENIED_PATH: return "denied_paths " + entry();
    case CERB_RULE_READ_ONLY_PATH: return "read_only_paths " + entry();
    case CERB_RULE_NOT_IN_ALLOWED_BINS: return "not in allowed_bins";
    case CERB_RULE_EXEC_MAPPING: return "executable mapping not in allowed_bins or read_only_paths";
    case CERB_RULE_FORBIDDEN_CAP: return "forbidden_caps " + target_text(e);
    case CERB_RULE_ESCALATION: return "escalation is shut under a policy";
    case CERB_RULE_PATH_UNRESOLVED: return "path could not be resolved";
    case CERB_RULE_DETACHED_MOUNT: return "mount outside the container's mount namespace";
    case CERB_RULE_RULE_NAME: return "a path rule is keyed on this name";
    case CERB_RULE_DNS_PORT: return "the DNS port is the gate's under host names";
    case CERB_RULE_XATTR: return "xattrs are refused under path rules";
    case CERB_RULE_IO_URING: return "io_uring is refused under host or path rules";
    case CERB_RULE_MEMFD: return "memfds are refused under allowed_bins";
    case CERB_RULE_OUTSIDE_CONTAINER: return "not in the container: another process, the host's keyrings";
    case CERB_RULE_OWNER_UNREMEMBERED: return "no room to remember who set a file's owner";
    case CERB_RULE_NO_DNS_GATE: return "no DNS gate serves the container: its queries fail closed";
    case CERB_RULE_NO_EGRESS_PROXY:
        return "no egress proxy serves the container: its connections to allowed_http hosts fail closed";
    }
    return "rule-" + std::to_string(e.rule);
}

std::string target_text(const cerb_event& e)
{
    switch (e.target_kind) {
    case CERB_TARGET_ADDRESS: return address_text(e);
    case CERB_TARGET_PATH: return path_of(e);
    case CERB_TARGET_CAPABILITY: {
        std::string_view name = capabilities::capability_name(e.number);
        return name.empty() ? "cap=" + std::to_string(e.number) : std::string(name);
    }
    case CERB_TARGET_NUMBER: return number_text(e);
    }
    return "";
}

std::string rfc3339_ns(int64_t wall_ns)
{
    time_t seconds = static_cast<time_t>(wall_ns / 1000000000);
    long nanos = static_cast<long>(wall_ns % 1000000000);
    if (nanos < 0) {
        seconds -= 1;
        nanos += 1000000000;
    }
    struct tm tm {};
    gmtime_r(&seconds, &tm);
    char buf[64];
    size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof(buf) - n, ".%09ldZ", nanos);
    return buf;
}

namespace {

int64_t clock_ns(clockid_t clock)
{
    struct timespec ts {};
    clock_gettime(clock, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

} // namespace

int64_t boot_to_wall_offset()
{
    return clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_BOOTTIME);
}

int64_t wall_now_ns()
{
    return clock_ns(CLOCK_REALTIME);
}

ordered_json event_json(const cerb_event& e, const EventContext& ctx)
{
    ordered_json j;
    j["type"] = "denial";
    // A boot time past what int64 nanoseconds hold (never from a real clock) saturates
    // rather than overflowing (found by the trail fuzz target).
    int64_t wall_ns = 0;
    if (e.time_ns > static_cast<uint64_t>(INT64_MAX) ||
        __builtin_add_overflow(static_cast<int64_t>(e.time_ns), ctx.boot_to_wall_ns, &wall_ns))
        wall_ns = INT64_MAX;
    j["time"] = rfc3339_ns(wall_ns);
    j["id"] = ctx.container_id;
    j["pid"] = e.pid;
    j["tid"] = e.tid;
    j["comm"] = std::string(e.comm, strnlen(e.comm, sizeof(e.comm)));
    j["exe"] = ctx.exe;
    j["uid"] = e.uid;
    j["gid"] = e.gid;
    j["op"] = op_name(e.op);
    j["target"] = target_text(e);
    if (e.op == CERB_OP_OPEN)
        j["access"] = e.number & CERB_ACCESS_WRITE ? "write" : "read";
    j["verdict"] = e.verdict == CERB_VERDICT_AUDIT ? "audit" : "denied";
    j["errno"] = e.err;
    j["error"] = errno_name(e.err);
    j["rule"] = rule_text(e);
    return j;
}

ordered_json lost_json(const std::string& id, int64_t wall_ns, uint64_t count, uint64_t total)
{
    ordered_json j = record_head("lost", id, wall_ns);
    j["count"] = count;
    j["total"] = total;
    return j;
}

ordered_json dns_json(const std::string& id, int64_t wall_ns, const DnsVerdict& dns)
{
    ordered_json j = record_head("dns", id, wall_ns);
    j["name"] = dns.name;
    j["qtype"] = dns.qtype;
    j["verdict"] = dns.verdict;
    j["rule"] = dns.rule;
    if (!dns.address.empty())
        j["address"] = dns.address;
    if (!dns.answer.empty())
        j["answer"] = dns.answer;
    if (dns.answered_by)
        j["answered_by"] = *dns.answered_by;
    return j;
}

ordered_json http_json(const std::string& id, int64_t wall_ns, const HttpExchange& exchange)
{
    ordered_json j = record_head("http", id, wall_ns);
    j["kind"] = exchange.kind;
    j["verdict"] = exchange.verdict;
    j["server_name"] = exchange.server_name;
    if (exchange.kind == "http") {
        j["method"] = exchange.method;
        j["url"] = exchange.url;
    }
    j["address"] = exchange.address;
    j["rule"] = exchange.rule;
    if (!exchange.reason.empty())
        j["reason"] = exchange.reason;
    if (exchange.status)
        j["status"] = exchange.status;
    if (!exchange.credential.empty())
        j["credential"] = exchange.credential;
    return j;
}

namespace {

// A brokered call's head: the record's and the call's (the tool, its arguments, the agent's directory).
ordered_json call_head(const char* type, const std::string& id, int64_t wall_ns, const std::string& tool,
                       const std::vector<std::string>& args, const std::string& cwd)
{
    ordered_json j = record_head(type, id, wall_ns);
    j["tool"] = tool;
    j["args"] = args;
    j["cwd"] = cwd;
    return j;
}

} // namespace

ordered_json command_json(const std::string& id, int64_t wall_ns, const CommandCall& call)
{
    ordered_json j = call_head("command", id, wall_ns, call.tool, call.args, call.cwd);
    j["verdict"] = call.verdict;
    j["backend"] = call.backend;
    j["rule"] = call.rule;
    if (call.status)
        j["status"] = *call.status;
    if (call.signal)
        j["signal"] = *call.signal;
    if (call.bytes_in)
        j["bytes_in"] = *call.bytes_in;
    if (call.bytes_out)
        j["bytes_out"] = *call.bytes_out;
    j["duration_ms"] = call.duration_ms;
    if (!call.answer.empty())
        j["answer"] = call.answer;
    if (call.answered_by)
        j["answered_by"] = *call.answered_by;
    return j;
}

ordered_json ask_json(const std::string& id, int64_t wall_ns, const AskedCall& call)
{
    ordered_json j = call_head("ask", id, wall_ns, call.tool, call.args, call.cwd);
    j["ask"] = call.ask_id;
    j["pid"] = call.pid;
    j["rule"] = call.rule;
    j["deadline"] = rfc3339_ns(call.deadline_ns);
    return j;
}

ordered_json ask_json(const std::string& id, int64_t wall_ns, const AskedName& name)
{
    ordered_json j = record_head("ask", id, wall_ns);
    j["name"] = name.name;
    j["qtype"] = name.qtype;
    j["ask"] = name.ask_id;
    j["rule"] = name.rule;
    j["deadline"] = rfc3339_ns(name.deadline_ns);
    return j;
}

ordered_json start_json(const std::string& id, int64_t wall_ns, const TrailStart& start)
{
    ordered_json j = record_head("start", id, wall_ns);
    j["enforcement"] = start.enforcement;
    if (!start.passed_over.empty())
        j["passed_over"] = start.passed_over;
    j["mode"] = start.policy.value("mode", "enforce");
    j["policy"] = start.policy;
    j["not_reported"] = start.not_reported;
    j["why_not_reported"] = start.why_not_reported;
    j["partly_enforced"] = start.partly_enforced;
    return j;
}

std::string dump_line(const ordered_json& record)
{
    return record.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string text_line(const std::string& json_line)
{
    json j = json::parse(json_line, nullptr, false);
    if (!j.is_object() || !j.contains("type"))
        return json_line;
    auto str = [&](const char* key) { return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : ""; };
    auto num = [&](const char* key) { return j.contains(key) && j[key].is_number() ? j[key].dump() : "?"; };
    std::string time = str("time");
    std::string clock = time.size() >= 23 ? time.substr(11, 12) : time; // HH:MM:SS.mmm
    std::string line = clock + " " + str("id") + " ";
    if (str("type") == "lost")
        return line + "LOST " + num("count") + " events (" + num("total") + " in all)";
    if (str("type") == "start") {
        line += "START enforced by " + str("enforcement") + ", mode " + str("mode");
        auto list = [&](const char* key, const char* label) {
            if (!j.contains(key) || !j[key].is_array() || j[key].empty())
                return;
            std::string items;
            for (const auto& item : j[key])
                items += (items.empty() ? "" : "; ") + (item.is_string() ? item.get<std::string>() : item.dump());
            line += std::string(", ") + label + ": " + items;
        };
        list("not_reported", "not reported");
        list("partly_enforced", "partly enforced");
        return line;
    }
    auto call_line = [&](const std::string& kind) {
        line += kind + " " + str("tool");
        if (j.contains("args") && j["args"].is_array())
            for (const auto& arg : j["args"])
                line += " " + (arg.is_string() ? arg.get<std::string>() : arg.dump());
    };
    if (str("type") == "ask") {
        std::string deadline = str("deadline");
        deadline = deadline.size() >= 19 ? deadline.substr(11, 8) : deadline;
        if (j.contains("name"))
            return line + "ask " + str("ask") + " dns " + str("name") + " " + str("qtype") + " ASKED (" + str("rule") +
                   "), answer by " + deadline;
        call_line("ask " + str("ask"));
        return line + " ASKED (" + str("rule") + "), pid " + num("pid") + ", answer by " + deadline;
    }
    if (str("type") == "command") {
        call_line("command");
        line += " " + upper(str("verdict")) + " (" + str("rule") + ")";
        if (j.contains("status"))
            line += ", exit " + num("status");
        if (j.contains("signal"))
            line += ", signal " + num("signal");
        line += " in " + num("duration_ms") + " ms";
        if (j.contains("bytes_in") || j.contains("bytes_out"))
            line += ", " + num("bytes_in") + " bytes in, " + num("bytes_out") + " out";
        return line;
    }
    if (str("type") == "http") {
        line += str("kind") == "tls" ? "tls " + str("server_name") + " -> " + str("address")
                                     : "http " + str("method") + " " + str("url");
        line += " " + upper(str("verdict")) + (str("rule").empty() ? "" : " (" + str("rule") + ")");
        if (j.contains("status"))
            line += ", " + num("status");
        if (j.contains("credential"))
            line += ", with the credential " + str("credential");
        return str("reason").empty() ? line : line + ": " + str("reason");
    }
    if (str("type") == "dns") {
        line += "dns " + str("name") + " " + str("qtype");
        if (!str("address").empty())
            line += " -> " + str("address");
        return line + " " + upper(str("verdict")) + " (" + str("rule") + ")";
    }
    line += str("comm") + "[" + num("pid") + "] " + str("op");
    if (!str("target").empty())
        line += " " + str("target");
    line += " " + upper(str("verdict")) + " (" + str("rule") + ")";
    if (j.contains("brokered") && j["brokered"].is_object()) { // a denial of the tool a brokered call ran
        const auto& call = j["brokered"];
        line += ", in brokered " + (call.contains("tool") && call["tool"].is_string() ? call["tool"].get<std::string>() : "?");
        if (call.contains("args") && call["args"].is_array())
            for (const auto& arg : call["args"])
                line += " " + (arg.is_string() ? arg.get<std::string>() : arg.dump());
    }
    return line;
}

bool refused_by_landlock(const cerb_call_event& call, const cerb_event& e)
{
    if (e.op == CERB_OP_MOUNT)
        return true;
    return (call.err == EACCES || call.err == EXDEV) && e.rule != CERB_RULE_DENIED_PATH;
}

} // namespace cerberus::audit
