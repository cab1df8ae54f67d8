// SPDX-License-Identifier: Apache-2.0
// The agent policy: what a container may connect to, open, exec and which
// capabilities it may never use. Parsed from JSON (an annotation, a profile
// file or the runtime's default), validated completely before anything is
// applied, then compiled to BPF map entries by policy_compile.
#pragma once

#include "process/process_launch.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::policy {

inline constexpr const char* inline_annotation = "io.cerberus.policy";
inline constexpr const char* profile_annotation = "io.cerberus.policy.profile";
inline constexpr const char* default_policy_dir = "/etc/cerberus/policies";
// The section `cerberus policy learn` adds to say from what and when it
// learned; parse_policy accepts it (an object) and enforces nothing from it.
inline constexpr const char* learned_section = "_learned";

enum class Mode { enforce, audit };

// Which enforcement backend (enforcement.hpp). Ordered by strength: a policy
// or --lock-policy default names the weakest it accepts.
enum class Enforcement { automatic, landlock, fmod_ret, bpf_lsm };

// "auto", "landlock", "fmod-ret", "bpf-lsm".
const char* enforcement_name(Enforcement enforcement);
std::optional<Enforcement> parse_enforcement(const std::string& name);

struct PortRange {
    uint16_t first = 0;
    uint16_t last = 65535;
    bool operator==(const PortRange&) const = default;
};

// An IPv4 or IPv6 network; addr holds 4 or 16 meaningful bytes, host bits zero.
struct Cidr {
    int family = 0; // AF_INET or AF_INET6
    std::array<uint8_t, 16> addr{};
    unsigned prefix = 0;
    bool operator==(const Cidr&) const = default;
    bool contains(const Cidr& other) const;
};

// One allowed_hosts entry: a network, or a host name, which the DNS gate
// admits the addresses of as answers for it arrive (never resolved at create).
struct HostRule {
    std::string text; // as written, for messages
    std::optional<Cidr> network;
    std::string host_name; // when no network: lower case, no trailing dot, maybe a leading "*."
    PortRange ports;
};

// The host names a lookup of which the DNS gate holds until an operator
// answers (policy_ask_hosts.hpp): allowed_hosts' name entries, never networks.
struct AskHosts {
    std::vector<HostRule> names;
    std::optional<std::chrono::milliseconds> ask_timeout; // unanswered that long: refused (none: 60 s)
};

// One allowed_http entry (policy_http.hpp): "GET https://api.example.org/repos/*".
struct HttpRule {
    std::string text; // as written, for messages and the 403's body
    std::string method; // upper case, as requests carry it
    std::string host_name; // as HostRule::host_name: lower case, maybe a leading "*."
    uint16_t port = 443;
    std::string path; // the glob, beginning with "/"
    bool websocket = false; // scheme wss: allows a WebSocket upgrade (a GET), never a plain request
};

// One tool of the policy's commands (policy_commands.hpp): argument patterns,
// kept as written but for their spacing ("push origin feature/*").
struct CommandRule {
    std::vector<std::string> allow;
    std::vector<std::string> deny;
    std::vector<std::string> ask; // held until an operator answers (`cerberus ask`)
    std::optional<std::chrono::milliseconds> ask_timeout; // unanswered that long: denied (none: 60 s)
    bool operator==(const CommandRule&) const = default;
};
using Commands = std::map<std::string, CommandRule>; // by the tool's name

// An absent allow-list (nullopt) does not restrict; an empty one allows nothing.
// Each list has its entry in rule_lists.cpp, which says how it is read,
// written, narrowed, compiled and worded (docs/architecture.md, "Adding a rule kind").
struct Policy {
    Mode mode = Mode::enforce;
    std::optional<std::vector<HostRule>> allowed_hosts;
    std::optional<AskHosts> ask_hosts; // none: no name is asked about
    std::optional<std::vector<std::string>> allowed_paths;
    std::optional<std::vector<std::string>> read_only_paths;
    std::vector<std::string> denied_paths;
    std::optional<std::vector<std::string>> allowed_bins;
    std::vector<int> forbidden_caps; // capability numbers, sorted, unique
    Commands commands; // the tools the command broker runs on the host; none: no tool brokered
    std::vector<HttpRule> allowed_http; // requests the egress proxy lets through; none: no host reached through it
    Enforcement enforcement = Enforcement::automatic; // the weakest backend accepted; automatic: any

    bool restricts_paths() const { return allowed_paths || read_only_paths; }
};

// Parses a policy document. Errors name the field and value, e.g.
// `policy.allowed_hosts[2]: bad CIDR "10.0.0.0/33"` (errno EINVAL).
Policy parse_policy(const std::string& json);

// One allowed_hosts entry ("1.1.1.1:443", "[2001:db8::1]:443", "10.0.0.0/8:1000-2000",
// "2001:db8::/32", "example.org:443", "*.example.org:443"); field names the entry in errors.
HostRule parse_host_rule(const std::string& text, const std::string& field);

// True when name (as a DNS query carries it: any case, maybe a trailing dot)
// is pattern (a HostRule::host_name) or, for "*.example.org", one label or
// more below example.org (never example.org itself).
bool host_name_matches(const std::string& pattern, const std::string& name);

// Whether every name pattern matches, wide matches too: a wildcard is
// covered only by an equal or broader wildcard.
bool host_pattern_covers(const std::string& wide, const std::string& pattern);

// True when the policy names hosts, allowed, asked about or reached through the egress proxy (the
// container's DNS goes through the gate).
bool has_host_names(const Policy& policy);

// Paths are absolute; "." and ".." components are refused; "//" and a
// trailing "/" are dropped. Returns the normal form ("/" stays "/").
std::string normalize_policy_path(const std::string& path, const std::string& field);

// Capability number for "CAP_SYS_ADMIN" in any case (process/capabilities' table).
std::optional<int> capability_number(const std::string& name);

// For a config the caller cannot change (an OCI hook's): throws, naming the
// field, unless it already is what forced_on_processes would make it.
void require_policy_applied(const Policy& policy, const spec::Spec& spec);

// --lock-policy: the annotation may only narrow the default. Returns the
// effective policy, or throws an error naming the first widening entry.
Policy narrow_policy(const Policy& locked_default, const Policy& annotation);

// Where a container's policy comes from (global flags of the runtime).
struct PolicySources {
    std::string policy_dir = default_policy_dir;
    std::string default_policy_file; // --default-policy, empty: none
    bool lock = false; // --lock-policy
};

// The effective policy of a bundle, or nullopt when
// neither an annotation nor a default policy gives one. Called in create,
// before anything is set up.
std::optional<Policy> resolve_policy(const std::map<std::string, std::string>& annotations,
                                     const PolicySources& sources);

// ld-linux-x86-64.so.2, ld-musl-x86_64.so.1, ld64.so.2, ...: never an allowed_bins entry.
bool is_dynamic_loader(const std::string& path);

// What a policy forces on every process of its container: noNewPrivileges,
// and the forbidden capabilities dropped from all five sets.
launch::ProcessConstraints forced_on_processes(const Policy& policy);

} // namespace cerberus::policy
