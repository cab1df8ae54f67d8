// SPDX-License-Identifier: Apache-2.0
// The DNS gate's queries on their way to a nameserver: where each answer goes
// back, under which id the nameserver knows it, until when it waits, and how
// many each container has waiting (a flooding agent only delays its own).
#pragma once

#include "base/fd.hpp"
#include "dns/dns_admission.hpp"
#include "dns/dns_answers.hpp"
#include "dns/dns_transport.hpp"
#include "policy/policy.hpp"

#include <sys/socket.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace cerberus::dns {

using Clock = std::chrono::steady_clock;

// Where an answer goes back: the UDP socket the query came to and its
// sender, or a TCP connection.
struct Client {
    int udp_fd = -1;
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
    uint64_t tcp_conn = 0; // 0: UDP
};

struct Pending {
    uint64_t cgroup_id = 0;
    Client client;
    uint16_t client_id = 0; // the query's own id, given back with the answer
    uint16_t gate_id = 0;   // the id the nameserver sees
    Question question;
    NamePorts ports; // what the name's rules allow (none in audit mode, for an unlisted name)
    std::vector<uint8_t> query;           // with the gate's id
    size_t nameserver = 0;                // which of the container's it was sent to
    Clock::time_point deadline;
    UniqueFd tcp; // a TCP query to the nameserver, its answer read into tcp_in
    FrameReader tcp_in{max_message + 2};
    uint64_t tcp_watch = 0;
};

class PendingTable {
public:
    explicit PendingTable(size_t max_per_container) : max_per_container_(max_per_container) {}

    // Takes the query in under a gate id (random, none other of the
    // container's UDP queries has it) and returns its key; nullopt when the
    // container has as many waiting as it may.
    std::optional<uint64_t> add(Pending pending);

    Pending* find(uint64_t key);

    // The UDP query of the container whose gate id an answer carries.
    std::optional<uint64_t> by_gate_id(uint64_t cgroup_id, uint16_t gate_id) const;

    // The keys whose deadline has come.
    std::vector<uint64_t> due(Clock::time_point now) const;

    // Takes it out (nullopt if it is not there): the caller stops watching its TCP socket.
    std::optional<Pending> remove(uint64_t key);
    // Every query of the container.
    std::vector<Pending> remove_container(uint64_t cgroup_id);

    size_t waiting(uint64_t cgroup_id) const;

private:
    uint16_t fresh_gate_id(uint64_t cgroup_id);
    uint16_t random_id();

    size_t max_per_container_;
    uint64_t next_key_ = 1;
    std::map<uint64_t, Pending> pending_;
    std::map<std::pair<uint64_t, uint16_t>, uint64_t> by_gate_id_; // UDP: (cgroup, gate id) -> key
    std::map<uint64_t, size_t> waiting_;
    // Random ids read from the kernel 128 at a time: one getrandom per query was a tenth of the gate's
    // system calls on a query's way.
    std::array<uint16_t, 128> random_ids_{};
    size_t random_left_ = 0;
};

} // namespace cerberus::dns
