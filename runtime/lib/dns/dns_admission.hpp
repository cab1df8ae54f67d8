// SPDX-License-Identifier: Apache-2.0
// Which addresses of an answer the DNS gate admits into CERB_MAP_NAMES, with
// which ports and until when: the pure rules (ranges that stay closed unless
// the policy lists them, the TTL clamp, the union of ports) and the table of
// what is admitted, which owns the map entries and their expiry.
#pragma once

#include "base/fd.hpp"
#include "dns/dns_answers.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cerberus::dns {

inline constexpr uint32_t min_ttl_seconds = 2; // an agent gets to connect after its lookup
inline constexpr uint32_t max_ttl_seconds = 3600; // a name's old addresses do not stay open for days
// What one container may hold admitted at once, counted in (address, name) pairs (an address whose names a
// restarted gate no longer knows counts once): an agent asking distinct names under a wildcard would otherwise
// fill CERB_MAP_NAMES for every container, and the gate's memory with names. A sixteenth of the map; a new pair
// over it is refused and recorded (`not admitted`), what is held is kept until it expires.
inline constexpr size_t max_admitted_per_container = CERB_MAX_NAME_ADDRESSES / 16;

uint64_t clamp_ttl_ns(uint32_t ttl_seconds);

// The non-public range holding the address (loopback, link-local, private,
// CGNAT, unspecified, multicast, and the IPv4-mapped forms of IPv6 ones),
// described for the trail ("private range 10.0.0.0/8"); nullopt when public.
std::optional<std::string> reserved_range(const Address& address);

// Why the address is not admitted, or nullopt: a reserved range, unless one
// of the policy's networks covers the address.
std::optional<std::string> refusal(const Address& address, const std::vector<policy::Cidr>& networks);

// "1.2.3.4" for an IPv4-mapped address, "2001:db8::1" otherwise.
std::string address_text(const Address& address);

struct NameRule {
    std::string pattern; // "api.example.com", "*.example.com"
    std::vector<policy::PortRange> ports;
};

// The ports of every rule whose pattern matches the name, merged; empty when
// none matches (the name is not allowed).
std::vector<policy::PortRange> ports_for(const std::vector<NameRule>& rules, const std::string& name);

// The same rules indexed for the query path: ports_for's answer in a lookup
// per label of the name, however many rules the policy has. The name as
// parse_query gives it (lower case, no trailing dot).
class NameIndex {
public:
    NameIndex() = default;
    explicit NameIndex(const std::vector<NameRule>& rules);
    std::vector<policy::PortRange> ports(const std::string& name) const;

private:
    std::unordered_map<std::string, std::vector<policy::PortRange>> exact_;
    std::unordered_map<std::string, std::vector<policy::PortRange>> wildcards_; // "*.example.com" as ".example.com"
};

// The ports an allowed name's addresses are admitted on: reached directly
// (allowed_hosts), and by TCP through the egress proxy (allowed_http hosts).
struct NamePorts {
    std::vector<policy::PortRange> direct, proxied;
    bool empty() const { return direct.empty() && proxied.empty(); }
};

// Ports as the programs read them. More ranges than fit keep the first ones:
// fewer ports, never more.
cerb_net_value net_value(const std::vector<policy::PortRange>& ports);
std::vector<policy::PortRange> ranges_of(const cerb_net_value& value);

// "443", "80,443", "8000-8100".
std::string ports_text(const cerb_net_value& value);

// What an address admitted for two names (or twice) carries: the union of
// the ports (direct and proxied) and the later expiry.
cerb_name_value merge(const cerb_name_value& live, const cerb_name_value& fresh);

// One admitted address, as state shows it.
struct Admitted {
    std::string name;
    Address address;
    cerb_name_value value;
};

// The gate's table of CERB_MAP_NAMES: what it wrote, per container, with the
// names that led to each address (for state), and their expiry.
class AdmittedTable {
public:
    explicit AdmittedTable(UniqueFd map, size_t max_per_container = max_admitted_per_container)
        : map_(std::move(map)), max_per_container_(max_per_container)
    {
    }

    // A restarted gate: every entry of the map, for the containers it serves
    // (the others' entries are deleted); names come from the last snapshot.
    void rebuild(const std::set<uint64_t>& cgroups, const std::map<uint64_t, std::vector<Admitted>>& snapshots);

    // refused: a new address or name for a container holding max_per_container pairs (nothing written).
    enum class Change { none, expiry, shown, refused };

    // Writes (merged with a live entry) before the answer goes to the agent.
    // Throws when the map refuses it (full). Writes nothing when the entry
    // already holds the name, the ports and an expiry as late (a cached
    // answer asked again): the gate is the map's one writer while it runs,
    // delete's removal of a container's entries aside.
    // Returns what changed of what state shows: nothing, only an expiry, or
    // a new address, name or port (the snapshot is due).
    Change admit(uint64_t cgroup_id, const std::string& name, const Address& address, cerb_name_value value);

    // Deletes the entries expired at now_ns; returns the containers that changed.
    std::set<uint64_t> expire(uint64_t now_ns);

    // Every entry of the container (delete, or a gone cgroup).
    void forget(uint64_t cgroup_id);

    std::vector<Admitted> of(uint64_t cgroup_id) const;
    size_t max_per_container() const { return max_per_container_; }

    // The names that led to the address (the egress proxy's check of a TLS server name).
    std::set<std::string> names_at(uint64_t cgroup_id, const Address& address) const;

private:
    struct Entry {
        std::set<std::string> names;
        cerb_name_value value;
    };
    struct Held {
        std::map<Address, Entry> addresses;
        size_t pairs = 0; // what max_per_container_ bounds
    };
    static size_t pairs_of(const Entry& entry) { return std::max<size_t>(1, entry.names.size()); }

    UniqueFd map_;
    size_t max_per_container_;
    std::map<uint64_t, Held> entries_;
};

// What one answer did to the table.
struct AnswerAdmission {
    bool shown_changed = false; // a new address, name or port: state's snapshot is due now
    bool expiry_only = false;   // only expiries moved: the snapshot can wait for the next tick
    std::vector<std::pair<Address, std::string>> refused; // not admitted, and why (a reserved range)
    std::vector<Address> over_bound; // not admitted: the container holds as many pairs as it may
    std::vector<std::string> failed; // entries the map refused (full): the agent cannot connect there
};

// The answer's addresses admitted for `name` on `ports` until their TTL
// (clamped) from now_ns, but those in a reserved range none of the policy's
// networks covers.
AnswerAdmission admit_answer(AdmittedTable& table, uint64_t cgroup_id, const std::vector<policy::Cidr>& networks,
                             const std::string& name, const NamePorts& ports,
                             const std::vector<AddressRecord>& records, uint64_t now_ns);

// CLOCK_BOOTTIME, as bpf_ktime_get_boot_ns reads it.
uint64_t boot_now_ns();

} // namespace cerberus::dns
