// SPDX-License-Identifier: Apache-2.0
// What a policy lets an agent do, computed the way the kernel side decides
// (a denied prefix wins, then the most specific allowed or read-only entry),
// so that a policy can be judged as a whole: --lock-policy narrowing and the
// allowed_bins check compare effective access, never list membership.
#pragma once

#include "policy/policy.hpp"

#include <string>
#include <vector>

namespace cerberus::policy {

// Sorted, overlapping and adjacent ranges merged.
std::vector<PortRange> merge_port_ranges(std::vector<PortRange> ranges);

// The effective access to the files at and below one path (down to the next
// path a rule names).
struct PathAccess {
    bool read = false;
    bool write = false;
    bool map_exec = false; // mapped executable (a library, the loader's target); exec itself is allowed_bins'
    std::string decided_by; // `allowed_paths[2] "/workspace"`, `denied_paths[0] "/x"`, or why none applies
};

// One path some rule names (or, with an empty path, any path no rule names
// nor lies under), and the access each of the judged policies gives there.
// Between two such paths nothing changes, so these points are all there is
// to compare.
struct PathPoint {
    std::string path;
    std::vector<PathAccess> access; // one per policy, in the order given
};

// Every path named by an entry of any of the policies (allowed_paths,
// read_only_paths, denied_paths, allowed_bins), plus the unnamed rest.
// n·log n in the number of entries.
std::vector<PathPoint> path_points(const std::vector<const Policy*>& policies);

// The networks of an allowed_hosts list (its names left out), for asking what they allow.
class HostIndex {
public:
    explicit HostIndex(const std::vector<HostRule>& rules);

    // Each distinct network once, sorted, with its own ports merged.
    const std::vector<std::pair<Cidr, std::vector<PortRange>>>& networks() const { return networks_; }

    // The ports allowed to every address of network: those of each listed
    // network that contains it (the kernel's longest match carries them all).
    std::vector<PortRange> ports_covering(const Cidr& network) const;

    // Whether every address of network may be reached on every port of ports,
    // by any combination of the listed networks.
    bool allows(const Cidr& network, const std::vector<PortRange>& ports) const;

private:
    const std::vector<PortRange>* find(const Cidr& network) const;
    bool has_network_inside(const Cidr& network) const;

    std::vector<std::pair<Cidr, std::vector<PortRange>>> networks_;
};

// Throws, naming the entry, when an allowed_bins entry is writable under the
// policy's own path rules: the agent could replace it and run anything.
void check_bins_read_only(const Policy& policy);

} // namespace cerberus::policy
