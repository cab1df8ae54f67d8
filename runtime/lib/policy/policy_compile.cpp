// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_compile.hpp"

#include "base/error.hpp"
#include "policy/policy_access.hpp"
#include "policy/rule_lists.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace cerberus::policy {

namespace {

constexpr uint64_t fnv_offset = 0xcbf29ce484222325ULL;
constexpr uint64_t fnv_prime = 0x100000001b3ULL;

std::string cidr_text(const Cidr& network)
{
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(network.family, network.addr.data(), text, sizeof(text));
    return std::string(text) + "/" + std::to_string(network.prefix);
}

cerb_net_value net_value(const Cidr& network, const std::vector<PortRange>& ports)
{
    auto ranges = merge_port_ranges(ports);
    if (ranges.size() > CERB_MAX_PORT_RANGES)
        throw Error("policy.allowed_hosts: " + std::to_string(ranges.size()) + " port ranges apply to " +
                        cidr_text(network) + ", at most " + std::to_string(CERB_MAX_PORT_RANGES) + " fit",
                    E2BIG);
    cerb_net_value value{};
    value.nranges = static_cast<uint32_t>(ranges.size());
    for (size_t i = 0; i < ranges.size(); ++i)
        value.ranges[i] = {ranges[i].first, ranges[i].last};
    return value;
}

template <typename Key>
Key net_key(const Cidr& network, uint64_t cgroup_id)
{
    Key key{};
    key.prefixlen = 64 + network.prefix;
    key.cgroup_lo = static_cast<uint32_t>(cgroup_id);
    key.cgroup_hi = static_cast<uint32_t>(cgroup_id >> 32);
    std::memcpy(key.addr, network.addr.data(), sizeof(key.addr));
    return key;
}

// A container may take only its share of the maps every container shares.
void check_share(size_t entries, size_t share, const std::string& what)
{
    if (entries > share)
        throw Error("policy: " + std::to_string(entries) + " " + what + ", more than the " +
                        std::to_string(share) + " one container may hold",
                    E2BIG);
}

// The programs hash the bytes before each '/', so the root is the empty prefix.
std::string prefix_form(const std::string& path)
{
    return path == "/" ? std::string() : path;
}

// Every directory above a rule's path (the root aside, which has no name to
// change) is marked, so that the programs refuse to rename, link or remove it:
// the rule would then name another object. Walking up stops at the first
// directory already marked, whose own ancestors are, so the work stays
// proportional to the bytes of the paths (times the map's log n).
void mark_ancestors(std::map<std::string, uint32_t>& kinds)
{
    std::vector<std::string> rule_paths;
    for (const auto& [path, path_kinds] : kinds)
        rule_paths.push_back(path);
    for (const auto& path : rule_paths) {
        for (size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0;
             slash = path.rfind('/', slash - 1)) {
            auto& above = kinds[path.substr(0, slash)];
            if (above & CERB_PATH_ABOVE)
                break;
            above |= CERB_PATH_ABOVE;
        }
    }
}

// "allowed_paths, read_only_paths, denied_paths and allowed_bins": the lists whose paths fill the path map.
std::string path_list_names()
{
    std::vector<std::string> names;
    for (const auto& list : rule_lists())
        if (list.path_kind)
            names.emplace_back(list.name);
    std::string text;
    for (size_t i = 0; i < names.size(); ++i)
        text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return text;
}

} // namespace

uint64_t path_hash(std::string_view path, uint64_t seed)
{
    uint64_t hash = fnv_offset ^ seed;
    for (unsigned char c : path)
        hash = (hash ^ c) * fnv_prime;
    return hash;
}

// One entry per distinct network; each also allows the ports of every
// shorter network that covers it, since the trie answers with the longest.
// n·log n: each network looks up its at most 128 shorter forms. Names add no
// entries: the DNS gate admits their addresses.
void compile_host_rules(const Policy& policy, CompiledPolicy& out)
{
    HostIndex index(*policy.allowed_hosts);
    for (const auto& [network, own_ports] : index.networks()) {
        auto ports = index.ports_covering(network);
        if (network.family == AF_INET)
            out.net4.push_back({net_key<cerb_net4_key>(network, out.cgroup_id), net_value(network, ports)});
        else
            out.net6.push_back({net_key<cerb_net6_key>(network, out.cgroup_id), net_value(network, ports)});
    }
    if (has_host_names(policy))
        out.policy.flags |= CERB_HAS_NAMES;
}

void compile_forbidden_caps(const Policy& policy, CompiledPolicy& out)
{
    for (int cap : policy.forbidden_caps)
        out.policy.forbidden_caps |= 1ULL << cap;
}

CompiledPolicy compile_policy(const Policy& policy, uint64_t cgroup_id, uint64_t path_seed)
{
    CompiledPolicy out;
    out.cgroup_id = cgroup_id;
    if (policy.mode == Mode::enforce)
        out.policy.flags |= CERB_ENFORCE;
    std::map<std::string, uint32_t> kinds; // path (its prefix form) -> CERB_PATH_*
    for (const auto& list : rule_lists()) {
        if (!list.present(policy))
            continue;
        out.policy.flags |= list.policy_flag;
        if (list.compile)
            list.compile(policy, out);
        if (const auto* paths = list.paths_in(policy))
            for (const auto& path : *paths)
                kinds[list.exact_files ? path : prefix_form(path)] |= list.path_kind;
    }
    mark_ancestors(kinds);
    for (const auto& [path, path_kinds] : kinds) {
        PathEntry entry{};
        entry.key.cgroup_id = cgroup_id;
        entry.key.hash = path_hash(path, path_seed);
        entry.key.len = static_cast<uint32_t>(path.size());
        entry.value.kinds = path_kinds;
        out.policy.path_lengths |= cerb_path_length_bit(entry.key.len);
        out.paths.push_back(entry);
    }
    check_share(out.net4.size(), container_net_rules, "distinct IPv4 networks in allowed_hosts");
    check_share(out.net6.size(), container_net_rules, "distinct IPv6 networks in allowed_hosts");
    check_share(out.paths.size(), container_path_rules,
                "distinct paths in " + path_list_names() + ", with the directories above them");
    return out;
}

void assign_cgroup(CompiledPolicy& compiled, uint64_t cgroup_id)
{
    compiled.cgroup_id = cgroup_id;
    for (auto& entry : compiled.net4) {
        entry.key.cgroup_lo = static_cast<uint32_t>(cgroup_id);
        entry.key.cgroup_hi = static_cast<uint32_t>(cgroup_id >> 32);
    }
    for (auto& entry : compiled.net6) {
        entry.key.cgroup_lo = static_cast<uint32_t>(cgroup_id);
        entry.key.cgroup_hi = static_cast<uint32_t>(cgroup_id >> 32);
    }
    for (auto& entry : compiled.paths)
        entry.key.cgroup_id = cgroup_id;
}

} // namespace cerberus::policy
