// SPDX-License-Identifier: Apache-2.0
// Effective access: path rules combined as the kernel side combines them,
// and what an allowed_hosts list reaches.
#include "policy/policy_access.hpp"

#include "base/error.hpp"
#include "policy/rule_lists.hpp"
#include "rootfs/paths.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace cerberus::policy {

namespace {

std::string named(const char* field, size_t index, const std::string& path)
{
    return std::string(field) + "[" + std::to_string(index) + "] \"" + path + "\"";
}

// '/' orders before every other byte, so that what lies below a path follows
// it directly: "/a", "/a/b", "/a-b".
bool component_order(const std::string& a, const std::string& b)
{
    auto rank = [](char c) { return c == '/' ? 0 : static_cast<unsigned char>(c); };
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                        [&](char x, char y) { return rank(x) < rank(y); });
}

// The entries of one policy that name one path (first index of each list).
struct OwnRules {
    std::string allowed, read_only, denied; // decided_by texts; empty when absent
};

// What applies at a point: its own entries over its nearest named ancestor's.
struct Inherited {
    const std::string* denied_by = nullptr; // the covering denied_paths entry
    const std::string* allow_by = nullptr; // the most specific allowed_paths / read_only_paths entry
    bool writable = false; // that path is in allowed_paths
    bool read_only = false; // that path is in read_only_paths
};

std::unordered_map<std::string, OwnRules> own_rules(const Policy& policy)
{
    std::unordered_map<std::string, OwnRules> rules;
    auto add = [&](const std::vector<std::string>& paths, const char* field, std::string OwnRules::*slot) {
        for (size_t i = 0; i < paths.size(); ++i) {
            auto& text = rules[paths[i]].*slot;
            if (text.empty())
                text = named(field, i, paths[i]);
        }
    };
    add(policy.allowed_paths.value_or(std::vector<std::string>{}), "allowed_paths", &OwnRules::allowed);
    add(policy.read_only_paths.value_or(std::vector<std::string>{}), "read_only_paths", &OwnRules::read_only);
    add(policy.denied_paths, "denied_paths", &OwnRules::denied);
    return rules;
}

Inherited apply(Inherited state, const OwnRules* own)
{
    if (!own)
        return state;
    if (!state.denied_by && !own->denied.empty())
        state.denied_by = &own->denied;
    if (!own->allowed.empty() || !own->read_only.empty()) {
        state.writable = !own->allowed.empty();
        state.read_only = !own->read_only.empty();
        state.allow_by = state.writable ? &own->allowed : &own->read_only;
    }
    return state;
}

PathAccess access_of(const Policy& policy, const Inherited& state)
{
    bool bins = policy.allowed_bins.has_value();
    if (state.denied_by)
        return {.decided_by = *state.denied_by};
    if (!policy.restricts_paths())
        return {.read = true, .write = true, .map_exec = !bins, .decided_by = "no allowed_paths or read_only_paths"};
    if (!state.allow_by)
        return {.decided_by = "not under allowed_paths or read_only_paths"};
    // Under allowed_bins an executable mapping is allowed only below a path that is
    // read-only and nothing more (the programs' mmap_file hook).
    return {.read = true,
            .write = state.writable,
            .map_exec = !bins || (state.read_only && !state.writable),
            .decided_by = *state.allow_by};
}

std::vector<PortRange> subtract(const std::vector<PortRange>& want, const std::vector<PortRange>& have)
{
    std::vector<PortRange> left;
    for (auto range : want) {
        uint32_t first = range.first;
        for (const auto& cut : have) {
            if (cut.last < first || cut.first > range.last)
                continue;
            if (cut.first > first)
                left.push_back({static_cast<uint16_t>(first), static_cast<uint16_t>(cut.first - 1)});
            first = static_cast<uint32_t>(cut.last) + 1;
            if (first > range.last)
                break;
        }
        if (first <= range.last)
            left.push_back({static_cast<uint16_t>(first), range.last});
    }
    return left;
}

auto sort_key(const Cidr& network)
{
    return std::tie(network.family, network.addr, network.prefix);
}

bool network_less(const std::pair<Cidr, std::vector<PortRange>>& entry, const Cidr& network)
{
    return sort_key(entry.first) < sort_key(network);
}

unsigned max_prefix(const Cidr& network)
{
    return network.family == AF_INET ? 32 : 128;
}

Cidr truncated(Cidr network, unsigned prefix)
{
    for (unsigned bit = prefix; bit < max_prefix(network); ++bit)
        network.addr[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
    network.prefix = prefix;
    return network;
}

} // namespace

std::vector<PortRange> merge_port_ranges(std::vector<PortRange> ranges)
{
    std::sort(ranges.begin(), ranges.end(), [](const PortRange& a, const PortRange& b) { return a.first < b.first; });
    std::vector<PortRange> out;
    for (const auto& range : ranges) {
        if (!out.empty() && range.first <= static_cast<uint32_t>(out.back().last) + 1)
            out.back().last = std::max(out.back().last, range.last);
        else
            out.push_back(range);
    }
    return out;
}

std::vector<PathPoint> path_points(const std::vector<const Policy*>& policies)
{
    std::vector<std::unordered_map<std::string, OwnRules>> rules;
    std::vector<std::string> paths;
    for (const Policy* policy : policies) {
        rules.push_back(own_rules(*policy));
        for (const auto& list : rule_lists())
            if (const auto* listed = list.paths_in(*policy))
                paths.insert(paths.end(), listed->begin(), listed->end());
    }
    std::sort(paths.begin(), paths.end(), component_order);
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());

    // Walk the paths in tree order, keeping the chain of named ancestors, so
    // each point inherits from its nearest one in constant time.
    std::vector<std::pair<const std::string*, std::vector<Inherited>>> ancestors;
    std::vector<Inherited> root_state(policies.size());
    std::vector<PathPoint> points;
    auto emit = [&](const std::string& path, const std::vector<Inherited>& states) {
        PathPoint point{.path = path};
        for (size_t i = 0; i < policies.size(); ++i)
            point.access.push_back(access_of(*policies[i], states[i]));
        points.push_back(std::move(point));
    };
    for (const auto& path : paths) {
        while (!ancestors.empty() && !paths::within(path, *ancestors.back().first))
            ancestors.pop_back();
        std::vector<Inherited> states = ancestors.empty() ? root_state : ancestors.back().second;
        for (size_t i = 0; i < policies.size(); ++i) {
            auto own = rules[i].find(path);
            states[i] = apply(states[i], own == rules[i].end() ? nullptr : &own->second);
        }
        if (path == "/")
            root_state = states;
        emit(path, states);
        ancestors.emplace_back(&path, std::move(states));
    }
    emit("", root_state); // every path no rule names lies under "/" alone
    return points;
}

HostIndex::HostIndex(const std::vector<HostRule>& rules)
{
    std::vector<std::pair<Cidr, PortRange>> flat;
    for (const auto& rule : rules) {
        if (rule.network) // names are the DNS gate's, address by address
            flat.emplace_back(*rule.network, rule.ports);
    }
    std::sort(flat.begin(), flat.end(), [](const auto& a, const auto& b) { return sort_key(a.first) < sort_key(b.first); });
    for (const auto& [network, ports] : flat) {
        if (networks_.empty() || !(networks_.back().first == network))
            networks_.push_back({network, {}});
        networks_.back().second.push_back(ports);
    }
    for (auto& entry : networks_)
        entry.second = merge_port_ranges(std::move(entry.second));
}

const std::vector<PortRange>* HostIndex::find(const Cidr& network) const
{
    auto it = std::lower_bound(networks_.begin(), networks_.end(), network, network_less);
    return it != networks_.end() && it->first == network ? &it->second : nullptr;
}

std::vector<PortRange> HostIndex::ports_covering(const Cidr& network) const
{
    std::vector<PortRange> ports;
    for (unsigned prefix = 0; prefix <= network.prefix; ++prefix) {
        if (const auto* own = find(truncated(network, prefix)))
            ports.insert(ports.end(), own->begin(), own->end());
    }
    return merge_port_ranges(std::move(ports));
}

bool HostIndex::has_network_inside(const Cidr& network) const
{
    // Listed networks inside this one sort right after it: their addresses lie
    // in its range, and only this network itself and shorter ones start there
    // with a prefix as short as its own.
    Cidr start = network;
    start.prefix = network.prefix + 1;
    auto it = std::lower_bound(networks_.begin(), networks_.end(), start, network_less);
    return it != networks_.end() && network.contains(it->first);
}

bool HostIndex::allows(const Cidr& network, const std::vector<PortRange>& ports) const
{
    auto missing = subtract(merge_port_ranges(ports), ports_covering(network));
    if (missing.empty())
        return true;
    // Longer listed networks may still cover every address between them.
    if (network.prefix == max_prefix(network) || !has_network_inside(network))
        return false;
    Cidr low = truncated(network, network.prefix + 1);
    Cidr high = low;
    high.addr[network.prefix / 8] |= static_cast<uint8_t>(0x80 >> (network.prefix % 8));
    return allows(low, missing) && allows(high, missing);
}

void check_bins_read_only(const Policy& policy)
{
    if (!policy.allowed_bins || !policy.restricts_paths())
        return;
    std::unordered_map<std::string, PathAccess> access;
    for (auto& point : path_points({&policy}))
        access.emplace(point.path, std::move(point.access[0]));
    for (size_t i = 0; i < policy.allowed_bins->size(); ++i) {
        const std::string& bin = (*policy.allowed_bins)[i];
        const PathAccess& at = access.at(bin);
        if (at.write)
            throw Error("policy.allowed_bins[" + std::to_string(i) + "]: \"" + bin + "\" is writable (policy." +
                            at.decided_by +
                            "), so the agent could replace it and run anything; list it, or a directory above it, "
                            "in read_only_paths",
                        EINVAL);
    }
}

} // namespace cerberus::policy
