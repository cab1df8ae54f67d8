// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_admission.hpp"

#include "base/error.hpp"
#include "policy/policy_access.hpp"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <ctime>

namespace cerberus::dns {
namespace {

struct Range {
    const char* kind;
    const char* text;
    int family;
    std::array<uint8_t, 16> addr;
    unsigned prefix;
};

// The ranges an answer may not open unless the policy lists them: the
// host's own and its neighbours' networks, where a rebinding answer would
// point an allowed name.
const Range reserved[] = {
    {"unspecified", "0.0.0.0/8", AF_INET, {0}, 8},
    {"private range", "10.0.0.0/8", AF_INET, {10}, 8},
    {"CGNAT range", "100.64.0.0/10", AF_INET, {100, 64}, 10},
    {"loopback", "127.0.0.0/8", AF_INET, {127}, 8},
    {"link-local", "169.254.0.0/16", AF_INET, {169, 254}, 16},
    {"private range", "172.16.0.0/12", AF_INET, {172, 16}, 12},
    {"private range", "192.168.0.0/16", AF_INET, {192, 168}, 16},
    {"multicast", "224.0.0.0/4", AF_INET, {224}, 4},
    {"unspecified", "::/128", AF_INET6, {}, 128},
    {"loopback", "::1/128", AF_INET6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128},
    {"private range", "fc00::/7", AF_INET6, {0xfc}, 7},
    {"link-local", "fe80::/10", AF_INET6, {0xfe, 0x80}, 10},
    {"multicast", "ff00::/8", AF_INET6, {0xff}, 8},
};

bool is_v4_mapped(const Address& address)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return std::memcmp(address.data(), prefix, sizeof(prefix)) == 0;
}

// The address as a host network of its own family (IPv4 for a mapped one).
policy::Cidr host_cidr(const Address& address)
{
    policy::Cidr cidr;
    if (is_v4_mapped(address)) {
        cidr.family = AF_INET;
        std::memcpy(cidr.addr.data(), address.data() + 12, 4);
        cidr.prefix = 32;
    } else {
        cidr.family = AF_INET6;
        cidr.addr = address;
        cidr.prefix = 128;
    }
    return cidr;
}

} // namespace

uint64_t clamp_ttl_ns(uint32_t ttl_seconds)
{
    return uint64_t{std::clamp(ttl_seconds, min_ttl_seconds, max_ttl_seconds)} * 1000000000ULL;
}

std::optional<std::string> reserved_range(const Address& address)
{
    policy::Cidr host = host_cidr(address);
    for (const auto& range : reserved) {
        policy::Cidr network{range.family, range.addr, range.prefix};
        if (network.contains(host))
            return std::string(range.kind) + " " + range.text;
    }
    return std::nullopt;
}

std::optional<std::string> refusal(const Address& address, const std::vector<policy::Cidr>& networks)
{
    auto range = reserved_range(address);
    if (!range)
        return std::nullopt;
    policy::Cidr host = host_cidr(address);
    policy::Cidr as_v6{AF_INET6, address, 128};
    for (const auto& network : networks)
        if (network.contains(host) || network.contains(as_v6))
            return std::nullopt;
    return range;
}

std::string address_text(const Address& address)
{
    policy::Cidr host = host_cidr(address);
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(host.family, host.addr.data(), text, sizeof(text));
    return text;
}

std::vector<policy::PortRange> ports_for(const std::vector<NameRule>& rules, const std::string& name)
{
    std::vector<policy::PortRange> ports;
    for (const auto& rule : rules)
        if (policy::host_name_matches(rule.pattern, name))
            ports.insert(ports.end(), rule.ports.begin(), rule.ports.end());
    return policy::merge_port_ranges(std::move(ports));
}

NameIndex::NameIndex(const std::vector<NameRule>& rules)
{
    for (const auto& rule : rules) {
        auto& ports = rule.pattern.starts_with("*.") ? wildcards_[rule.pattern.substr(1)] : exact_[rule.pattern];
        ports.insert(ports.end(), rule.ports.begin(), rule.ports.end());
    }
}

std::vector<policy::PortRange> NameIndex::ports(const std::string& name) const
{
    std::vector<policy::PortRange> ports;
    if (auto it = exact_.find(name); it != exact_.end())
        ports = it->second;
    for (size_t dot = name.find('.'); dot != std::string::npos && !wildcards_.empty(); dot = name.find('.', dot + 1)) {
        auto it = wildcards_.find(name.substr(dot));
        if (it != wildcards_.end() && policy::host_name_matches("*" + it->first, name))
            ports.insert(ports.end(), it->second.begin(), it->second.end());
    }
    return policy::merge_port_ranges(std::move(ports));
}

cerb_net_value net_value(const std::vector<policy::PortRange>& ports)
{
    auto ranges = policy::merge_port_ranges(ports);
    cerb_net_value value{};
    value.nranges = static_cast<uint32_t>(std::min<size_t>(ranges.size(), CERB_MAX_PORT_RANGES));
    for (uint32_t i = 0; i < value.nranges; ++i)
        value.ranges[i] = {ranges[i].first, ranges[i].last};
    return value;
}

std::vector<policy::PortRange> ranges_of(const cerb_net_value& value)
{
    std::vector<policy::PortRange> ranges;
    for (uint32_t i = 0; i < std::min<uint32_t>(value.nranges, CERB_MAX_PORT_RANGES); ++i)
        ranges.push_back({value.ranges[i].first, value.ranges[i].last});
    return ranges;
}

std::string ports_text(const cerb_net_value& value)
{
    std::string text;
    for (const auto& range : ranges_of(value)) {
        if (!text.empty())
            text += ",";
        text += std::to_string(range.first);
        if (range.last != range.first)
            text += "-" + std::to_string(range.last);
    }
    return text;
}

namespace {

cerb_net_value united(const cerb_net_value& one, const cerb_net_value& other)
{
    auto ports = ranges_of(one);
    auto more = ranges_of(other);
    ports.insert(ports.end(), more.begin(), more.end());
    return net_value(ports);
}

bool same_ports(const cerb_name_value& one, const cerb_name_value& other)
{
    return std::memcmp(&one.ports, &other.ports, sizeof(one.ports)) == 0 &&
           std::memcmp(&one.proxied, &other.proxied, sizeof(one.proxied)) == 0;
}

} // namespace

cerb_name_value merge(const cerb_name_value& live, const cerb_name_value& fresh)
{
    cerb_name_value merged{};
    merged.expires_ns = std::max(live.expires_ns, fresh.expires_ns);
    merged.ports = united(live.ports, fresh.ports);
    merged.proxied = united(live.proxied, fresh.proxied);
    return merged;
}

uint64_t boot_now_ns()
{
    timespec now{};
    clock_gettime(CLOCK_BOOTTIME, &now);
    return uint64_t(now.tv_sec) * 1000000000ULL + uint64_t(now.tv_nsec);
}

void AdmittedTable::rebuild(const std::set<uint64_t>& cgroups,
                            const std::map<uint64_t, std::vector<Admitted>>& snapshots)
{
    entries_.clear();
    std::vector<cerb_name_key> stale;
    cerb_name_key key{}, next{};
    const cerb_name_key* previous = nullptr;
    while (bpf_map_get_next_key(map_.get(), previous, &next) == 0) {
        key = next;
        previous = &key;
        cerb_name_value value{};
        if (bpf_map_lookup_elem(map_.get(), &key, &value) < 0)
            continue;
        if (!cgroups.count(key.cgroup_id)) {
            stale.push_back(key);
            continue;
        }
        Address address;
        std::memcpy(address.data(), key.addr, sizeof(key.addr));
        Held& held = entries_[key.cgroup_id];
        Entry& entry = held.addresses[address];
        entry.value = value;
        if (auto snapshot = snapshots.find(key.cgroup_id); snapshot != snapshots.end())
            for (const auto& admitted : snapshot->second)
                if (admitted.address == address)
                    entry.names.insert(admitted.name);
        held.pairs += pairs_of(entry);
    }
    for (const auto& gone : stale)
        bpf_map_delete_elem(map_.get(), &gone);
}

AdmittedTable::Change AdmittedTable::admit(uint64_t cgroup_id, const std::string& name, const Address& address,
                                           cerb_name_value value)
{
    Held& held = entries_[cgroup_id];
    auto found = held.addresses.find(address);
    bool fresh = found == held.addresses.end();
    bool new_name = fresh || !found->second.names.count(name);
    if (!new_name && found->second.value.expires_ns >= value.expires_ns &&
        same_ports(merge(found->second.value, value), found->second.value))
        return Change::none;
    // A name for an address whose names a restarted gate lost takes the unnamed one's place.
    size_t more = fresh || (new_name && !found->second.names.empty()) ? 1 : 0;
    if (held.pairs + more > max_per_container_)
        return Change::refused;
    // The map is the truth (delete or another gate may have changed it): merge with what it holds.
    cerb_name_key key{.cgroup_id = cgroup_id, .addr = {}};
    std::memcpy(key.addr, address.data(), sizeof(key.addr));
    cerb_name_value live{};
    if (bpf_map_lookup_elem(map_.get(), &key, &live) == 0 && live.expires_ns > boot_now_ns())
        value = merge(live, value);
    if (bpf_map_update_elem(map_.get(), &key, &value, BPF_ANY) < 0) // the message made only when it is needed
        throw_errno("admitting " + address_text(address) + " for " + name + " in " + kernel::names_map.name);
    Entry& entry = fresh ? held.addresses[address] : found->second;
    bool new_ports = !same_ports(entry.value, value);
    entry.value = value;
    entry.names.insert(name);
    held.pairs += more;
    return new_name || new_ports ? Change::shown : Change::expiry;
}

std::set<uint64_t> AdmittedTable::expire(uint64_t now_ns)
{
    std::set<uint64_t> changed;
    for (auto& [cgroup_id, held] : entries_) {
        for (auto it = held.addresses.begin(); it != held.addresses.end();) {
            if (it->second.value.expires_ns > now_ns) {
                ++it;
                continue;
            }
            cerb_name_key key{.cgroup_id = cgroup_id, .addr = {}};
            std::memcpy(key.addr, it->first.data(), sizeof(key.addr));
            bpf_map_delete_elem(map_.get(), &key);
            held.pairs -= pairs_of(it->second);
            it = held.addresses.erase(it);
            changed.insert(cgroup_id);
        }
    }
    return changed;
}

void AdmittedTable::forget(uint64_t cgroup_id)
{
    auto it = entries_.find(cgroup_id);
    if (it == entries_.end())
        return;
    for (const auto& [address, entry] : it->second.addresses) {
        cerb_name_key key{.cgroup_id = cgroup_id, .addr = {}};
        std::memcpy(key.addr, address.data(), sizeof(key.addr));
        bpf_map_delete_elem(map_.get(), &key);
    }
    entries_.erase(it);
}

std::vector<Admitted> AdmittedTable::of(uint64_t cgroup_id) const
{
    std::vector<Admitted> out;
    if (auto it = entries_.find(cgroup_id); it != entries_.end())
        for (const auto& [address, entry] : it->second.addresses)
            for (const auto& name : entry.names.empty() ? std::set<std::string>{""} : entry.names)
                out.push_back({name, address, entry.value});
    return out;
}

std::set<std::string> AdmittedTable::names_at(uint64_t cgroup_id, const Address& address) const
{
    if (auto it = entries_.find(cgroup_id); it != entries_.end())
        if (auto entry = it->second.addresses.find(address); entry != it->second.addresses.end())
            return entry->second.names;
    return {};
}

AnswerAdmission admit_answer(AdmittedTable& table, uint64_t cgroup_id, const std::vector<policy::Cidr>& networks,
                             const std::string& name, const NamePorts& ports,
                             const std::vector<AddressRecord>& records, uint64_t now_ns)
{
    AnswerAdmission result;
    for (const auto& record : records) {
        if (auto why = refusal(record.address, networks)) {
            result.refused.emplace_back(record.address, *why);
            continue;
        }
        cerb_name_value value{};
        value.expires_ns = now_ns + clamp_ttl_ns(record.ttl);
        value.ports = net_value(ports.direct);
        value.proxied = net_value(ports.proxied);
        try {
            auto change = table.admit(cgroup_id, name, record.address, value);
            if (change == AdmittedTable::Change::refused) {
                result.over_bound.push_back(record.address);
                continue;
            }
            result.shown_changed |= change == AdmittedTable::Change::shown;
            result.expiry_only |= change == AdmittedTable::Change::expiry;
        } catch (const Error& e) {
            result.failed.push_back(e.what());
        }
    }
    return result;
}

} // namespace cerberus::dns
