// SPDX-License-Identifier: Apache-2.0
// Where the DNS gate listens for each container: the port of its sockets in
// the container's network namespace, kept in CERB_MAP_DNS_GATES, where the
// socket programs read it to steer the container's queries there. The map is
// pinned, so the port outlives a gate that dies and its restart binds the
// same one again. Private to dns/.
#pragma once

#include "base/fd.hpp"

#include <cstdint>
#include <optional>
#include <set>

namespace cerberus::dns {

class GatePorts {
public:
    GatePorts(); // opens the pinned map; throws when it is not pinned

    // The port recorded for the container; nullopt when there is none.
    std::optional<uint16_t> recorded(uint64_t cgroup_id) const;
    // Every port recorded, whatever the container and namespace.
    std::set<uint16_t> all() const;
    void record(uint64_t cgroup_id, uint16_t port);
    // Its queries are refused from then on (the programs find no gate). Never throws.
    void forget(uint64_t cgroup_id) noexcept;

private:
    UniqueFd map_;
};

} // namespace cerberus::dns
