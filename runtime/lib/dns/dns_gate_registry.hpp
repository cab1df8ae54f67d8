// SPDX-License-Identifier: Apache-2.0
// The DNS gate's files, host-wide, one set per layout (kernel/pinned_maps.hpp)
// like the audit collector's: in run_dir, gate.lock, gate.sock, gate.log
// (base/daemon.hpp), containers/<cgroup id>.json (what create registers: the
// gate serves exactly these) and admitted/<cgroup id>.json (what the gate
// admitted, rewritten at the tick after a change, or when `cerberus state`
// asks for it, which then reads it).
#pragma once

#include "base/daemon.hpp"
#include "dns/dns_admission.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::dns {

inline constexpr const char* run_dir = "/run/cerberus-dns/" CERB_LAYOUT_ID;

daemon::Daemon gate_daemon();

struct Registration {
    std::string id;
    uint64_t cgroup_id = 0;
    std::string trail; // the container's audit trail, where the gate appends its records
    bool audit = false; // the policy's mode is audit: forward every name, record what would be refused
    std::vector<NameRule> names;
    std::vector<std::string> networks; // the policy's address entries, as written ("10.0.0.0/8:443")
    std::vector<std::string> nameservers; // "192.0.2.53:53", "[2001:db8::53]:53"
    std::vector<NameRule> ask_names; // ask_hosts: a lookup held until an operator answers
    std::chrono::milliseconds ask_timeout{0}; // then refused
    // allowed_http: its hosts are reached through the egress proxy, which judges each request
    std::vector<policy::HttpRule> http;
    std::string egress_dir; // the proxy's CA for the container (egress/egress_trust.hpp); empty without http
};

// The hosts of allowed_http on their ports, as the gate admits names.
std::vector<NameRule> http_hosts_of(const Registration& registration);

// The policy's name and address entries, and the names it asks about; nameservers from the container's resolv.conf.
Registration registration_of(const std::string& id, uint64_t cgroup_id, const std::string& trail,
                             const policy::Policy& policy, std::vector<std::string> nameservers,
                             std::string egress_dir = "");

// The nameserver lines of a resolv.conf (port 53), at most 3 as glibc reads;
// 127.0.0.1:53 when there is none, as glibc then asks.
std::vector<std::string> nameservers_of(const std::string& resolv_conf);

struct Endpoint {
    int family = 0; // AF_INET: the first 4 bytes of addr
    std::array<uint8_t, 16> addr{};
    uint16_t port = 0;
    bool operator==(const Endpoint&) const = default;
};

// "1.2.3.4:53" or "[::1]:53"; nullopt when it is not one.
std::optional<Endpoint> parse_endpoint(const std::string& text);

// The endpoint's address as the gate's table and CERB_MAP_NAMES key it: IPv6, IPv4 mapped.
Address address_of(const Endpoint& endpoint);

nlohmann::json to_json(const Registration& registration);
Registration registration_from_json(const nlohmann::json& j); // throws on a malformed one

// The networks of a registration, parsed.
std::vector<policy::Cidr> networks_of(const Registration& registration);

std::string registration_path(uint64_t cgroup_id);
std::string admitted_path(uint64_t cgroup_id);

void write_registration(const Registration& registration);
// Every readable registration but those skip names; a malformed file is logged and skipped.
std::vector<Registration> read_registrations(const daemon::SkipCgroup& skip = {});
// Removes the registration and the admitted snapshot (absent ones are fine).
void remove_registration(uint64_t cgroup_id);

// The snapshot: [{"name","address","ports","expires" (RFC 3339),"expires_ns" (CLOCK_BOOTTIME)}].
nlohmann::json admitted_json(const std::vector<Admitted>& admitted);
void write_admitted(uint64_t cgroup_id, const std::vector<Admitted>& admitted);
// The snapshot as written (state shows it); an empty array when there is none.
nlohmann::json read_admitted_json(uint64_t cgroup_id);
// Parsed back (a restarted gate takes the names of the map's entries from it).
std::vector<Admitted> read_admitted(uint64_t cgroup_id);

} // namespace cerberus::dns
