// SPDX-License-Identifier: Apache-2.0
// What a policy would do with the actions an audit trail recorded, decided in
// user space the way the kernel programs decide them (bpf/cerberus_policy.bpf.c):
// for `cerberus policy check` and for learn mode. Host names in the policy
// must have been resolved.
#pragma once

#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::policy {

// One action of an agent, as a trail record (docs/audit.md) describes it.
struct Action {
    std::string op;     // "connect", "open", "exec", "capability", "command", "http", ...
    // "203.0.113.9:443", "[2001:db8::1]:443", a path, "CAP_NET_RAW", "git push origin main",
    // "GET https://api.example.org/repos/x" (http: the method and URL)
    std::string target;
    bool write = false; // an open that asked to write (the record's "access")
    std::string rule;   // the rule the record names
    std::string tool;               // command: the brokered tool
    std::vector<std::string> args;  // command: its arguments (argv without argv[0])
    std::optional<uint64_t> bytes_in, bytes_out; // command: what the call moved, when its tool ran
    // command: how an operator answered the call an ask held ("always", "once", "for 10m", "grant ID",
    // "deny", "timeout"...); empty when it was not asked
    std::string answer;
};

// The action of a denial record (type "denial", verdict "denied" or "audit"),
// of a command record (the broker's decision on a call, whatever it was:
// a narrower policy may deny what ran) or of an http record of a request
// allowed_http decided (likewise); nullopt for other records.
std::optional<Action> action_of_record(const nlohmann::json& record);

// "203.0.113.9:443" or "[2001:db8::1]:443" (an IPv4-mapped IPv6 address as
// IPv4): the address as a /32 or /128 and the port; nullopt for other text.
std::optional<std::pair<Cidr, uint16_t>> parse_address_target(const std::string& target);

// True for operations the trail names with a path target that write: link,
// rename, unlink, create, setattr, a unix socket connect or send, an open for writing.
bool writes_path(const Action& action);

// The rule of the policy that denies the action, in the trail's words ("not
// in allowed_hosts", "read_only_paths /etc", ...); nullopt when it is allowed.
std::optional<std::string> denying_rule(const Policy& policy, const Action& action);

// True when no policy document can allow the action: escalations, raw
// sockets, unresolved paths (and so learning leaves them denied).
bool denied_under_any_policy(const Action& action);

} // namespace cerberus::policy
