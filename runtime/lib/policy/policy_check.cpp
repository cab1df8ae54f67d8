// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_check.hpp"

#include "base/numbers.hpp"
#include "policy/policy_commands.hpp"
#include "policy/policy_http.hpp"
#include "policy/rule_lists.hpp"
#include "rootfs/paths.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace cerberus::policy {
namespace {

const std::string escalation_rule = "escalation is shut under a policy";
// The landlock backend's seccomp refusals (docs/policy.md, landlock), each under the rules that bring it.
const std::string xattr_rule = "xattrs are refused under path rules";
const std::string io_uring_rule = "io_uring is refused under host or path rules";
const std::string memfd_rule = "memfds are refused under allowed_bins";

std::string text_of(const nlohmann::json& record, const char* key)
{
    auto it = record.find(key);
    return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool is_path(const std::string& target)
{
    return !target.empty() && target[0] == '/';
}

// The longest entry of the list that the path is within, or empty.
std::string longest_within(const std::string& path, const std::optional<std::vector<std::string>>& entries)
{
    std::string longest;
    for (const auto& entry : entries.value_or(std::vector<std::string>{}))
        if (paths::within(path, entry) && (longest.empty() || entry.size() > longest.size()))
            longest = entry;
    return longest;
}

// The rules for a path, as check_path in bpf/policy_paths.bpf.h applies them:
// a denied prefix first, then the longest allowed or read-only prefix decides.
std::optional<std::string> path_rule(const Policy& policy, const std::string& path, bool write)
{
    for (const auto& denied : policy.denied_paths)
        if (paths::within(path, denied))
            return rule_list("denied_paths").denial_rule(denied);
    if (!policy.restricts_paths())
        return std::nullopt;
    std::string writable = longest_within(path, policy.allowed_paths);
    std::string readable = longest_within(path, policy.read_only_paths);
    if (writable.empty() && readable.empty())
        return rule_list("allowed_paths").denial_rule();
    if (write && writable.size() < readable.size())
        return rule_list("read_only_paths").denial_rule(readable);
    return std::nullopt;
}

std::optional<std::string> host_rule(const Policy& policy, const std::string& target)
{
    if (!policy.allowed_hosts)
        return std::nullopt;
    auto address = parse_address_target(target);
    if (!address)
        return rule_list("allowed_hosts").denial_rule(); // an address this build cannot read: nothing matches it
    for (const auto& rule : *policy.allowed_hosts)
        if (rule.network && rule.network->contains(address->first) && rule.ports.first <= address->second &&
            address->second <= rule.ports.last)
            return std::nullopt;
    return rule_list("allowed_hosts").denial_rule();
}

// A call the broker decided on; not one that failed before a decision (a malformed call).
std::optional<Action> command_action(const nlohmann::json& record)
{
    std::string verdict = text_of(record, "verdict");
    auto args = record.find("args");
    if ((verdict != "allowed" && verdict != "denied" && verdict != "audit") || args == record.end() ||
        !args->is_array())
        return std::nullopt;
    Action action{.op = "command", .rule = text_of(record, "rule"), .tool = text_of(record, "tool")};
    action.target = action.tool;
    for (const auto& arg : *args) {
        if (!arg.is_string())
            return std::nullopt;
        action.args.push_back(arg.get<std::string>());
        action.target += " " + action.args.back();
    }
    auto count = [&](const char* key) -> std::optional<uint64_t> {
        auto it = record.find(key);
        bool count = it != record.end() && it->is_number_integer() && it->get<int64_t>() >= 0;
        return count ? std::optional(it->get<uint64_t>()) : std::nullopt;
    };
    action.bytes_in = count("bytes_in");
    action.bytes_out = count("bytes_out");
    action.answer = text_of(record, "answer");
    return action;
}

// A request the egress proxy decided by allowed_http (its rule names an entry or "not in allowed_http"); not
// a refused handshake, nor a request refused for its form (a Host naming another site, a dot segment), which
// no entry can allow.
std::optional<Action> request_action(const nlohmann::json& record)
{
    std::string verdict = text_of(record, "verdict");
    if (text_of(record, "kind") != "http" || text_of(record, "rule").empty() ||
        (verdict != "allowed" && verdict != "denied" && verdict != "audit"))
        return std::nullopt;
    return Action{.op = "http", .target = text_of(record, "method") + " " + text_of(record, "url"),
                  .rule = text_of(record, "rule")};
}

// A policy without allowed_http has no proxy: the request's connect is allowed_hosts' to judge.
std::optional<std::string> request_rule(const Policy& policy, const std::string& target)
{
    if (policy.allowed_http.empty())
        return std::nullopt;
    auto request = parse_http_request(target);
    if (!request)
        return "not in allowed_http";
    auto decision =
        decide_http(policy.allowed_http, request->method, request->host, request->port, request->path,
                    request->websocket);
    return decision.allowed ? std::nullopt : std::optional(decision.rule);
}

} // namespace

std::optional<Action> action_of_record(const nlohmann::json& record)
{
    if (record.is_object() && text_of(record, "type") == "command")
        return command_action(record);
    if (record.is_object() && text_of(record, "type") == "http")
        return request_action(record);
    if (!record.is_object() || text_of(record, "type") != "denial")
        return std::nullopt;
    Action action{.op = text_of(record, "op"), .target = text_of(record, "target"), .rule = text_of(record, "rule")};
    action.write = text_of(record, "access") == "write";
    return action;
}

std::optional<std::pair<Cidr, uint16_t>> parse_address_target(const std::string& target)
{
    size_t colon = target.rfind(':');
    if (colon == std::string::npos || colon == 0)
        return std::nullopt;
    std::string host = target.substr(0, colon);
    auto port = parse_number(std::string_view(target).substr(colon + 1), 65535);
    if (!port)
        return std::nullopt;
    Cidr address;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        if (inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), address.addr.data()) != 1)
            return std::nullopt;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (std::memcmp(address.addr.data(), mapped, sizeof(mapped)) == 0) {
            std::memmove(address.addr.data(), address.addr.data() + 12, 4);
            std::fill(address.addr.begin() + 4, address.addr.end(), 0);
            address.family = AF_INET;
            address.prefix = 32;
        } else {
            address.family = AF_INET6;
            address.prefix = 128;
        }
    } else if (inet_pton(AF_INET, host.c_str(), address.addr.data()) == 1) {
        address.family = AF_INET;
        address.prefix = 32;
    } else {
        return std::nullopt;
    }
    return std::make_pair(address, static_cast<uint16_t>(*port));
}

bool writes_path(const Action& action)
{
    static const char* const writing[] = {"link", "rename", "unlink", "create", "setattr", "xattr", "connect", "sendmsg"};
    return action.write || std::find(std::begin(writing), std::end(writing), action.op) != std::end(writing);
}

bool denied_under_any_policy(const Action& action)
{
    return action.rule == escalation_rule || action.rule == "raw and packet sockets are refused" ||
           action.rule == "address family not allowed" || action.rule == "path could not be resolved" ||
           action.rule == xattr_rule || action.rule == io_uring_rule || action.rule == memfd_rule;
}

std::optional<std::string> denying_rule(const Policy& policy, const Action& action)
{
    if (denied_under_any_policy(action)) {
        // Mounts are shut only when the policy has path or binary rules.
        bool path_rules = policy.restricts_paths() || !policy.denied_paths.empty();
        if ((action.op == "mount" && !policy.restricts_paths() && !policy.allowed_bins) ||
            (action.rule == xattr_rule && !path_rules) ||
            (action.rule == io_uring_rule && !path_rules && !policy.allowed_hosts) ||
            (action.rule == memfd_rule && !policy.allowed_bins))
            return std::nullopt;
        return action.rule;
    }
    if (action.op == "command") {
        auto decision = decide_command(policy.commands, action.tool, action.args);
        return decision.allowed ? std::nullopt : std::optional(decision.rule);
    }
    if (action.op == "http")
        return request_rule(policy, action.target);
    if (action.op == "capability") {
        auto number = capability_number(action.target);
        if (number && std::binary_search(policy.forbidden_caps.begin(), policy.forbidden_caps.end(), *number))
            return rule_list("forbidden_caps").denial_rule(action.target);
        return std::nullopt;
    }
    if (action.op == "exec") {
        if (policy.allowed_bins &&
            std::find(policy.allowed_bins->begin(), policy.allowed_bins->end(), action.target) == policy.allowed_bins->end())
            return rule_list("allowed_bins").denial_rule();
        return std::nullopt;
    }
    if (action.op == "mmap_exec") {
        if (!policy.allowed_bins ||
            std::find(policy.allowed_bins->begin(), policy.allowed_bins->end(), action.target) != policy.allowed_bins->end())
            return std::nullopt;
        std::string writable = longest_within(action.target, policy.allowed_paths);
        std::string readable = longest_within(action.target, policy.read_only_paths);
        if (!readable.empty() && readable.size() > writable.size())
            return std::nullopt;
        return "executable mapping not in allowed_bins or read_only_paths";
    }
    if (action.op == "bind") // only the DNS port is refused, and only under host names
        return has_host_names(policy) ? std::optional(action.rule) : std::nullopt;
    if ((action.op == "connect" || action.op == "sendmsg") && !is_path(action.target))
        return host_rule(policy, action.target);
    if (is_path(action.target))
        return path_rule(policy, action.target, writes_path(action));
    return std::nullopt; // an operation this build does not know: nothing to decide
}

} // namespace cerberus::policy
