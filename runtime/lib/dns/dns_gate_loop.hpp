// SPDX-License-Identifier: Apache-2.0
// The DNS gate's event loop (dns_gate_server.hpp says what the gate does),
// shared by its two halves: dns_gate_server.cpp serves containers (their
// registration, sockets, ticks and the loop itself), dns_gate_queries.cpp
// the queries (from the agent to a nameserver and back, through admission).
// Private to dns/.
#pragma once

#include "audit/asks.hpp"
#include "audit/audit_format.hpp"
#include "audit/audit_trail.hpp"
#include "base/daemon.hpp"
#include "base/event_watches.hpp"
#include "dns/dns_admission.hpp"
#include "dns/dns_cache.hpp"
#include "dns/dns_gate_ports.hpp"
#include "dns/dns_gate_registry.hpp"
#include "dns/dns_limits.hpp"
#include "dns/dns_pending.hpp"
#include "dns/proxy_origins.hpp"
#include "egress/egress_trust.hpp"

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace cerberus::dns {

constexpr auto tick = std::chrono::seconds(1); // expiry, deadlines, gone containers, exit check
constexpr auto idle_linger = std::chrono::seconds(10); // as the audit collector: bursts share one gate
constexpr auto udp_wait = std::chrono::seconds(2); // per nameserver, then the next one
constexpr auto tcp_wait = std::chrono::seconds(5);
constexpr auto tcp_client_idle = std::chrono::seconds(10);
constexpr size_t max_pending_per_container = 256; // a flooding agent only delays its own answers
// Asked of the kernel for each agent's TCP connection: a whole answer fits, and a reader too slow for its
// answers fills this buffer (then loses the connection), never the gate's memory.
constexpr int client_send_buffer = max_message + 2;
constexpr size_t max_asks_per_container = 16; // more names asked at once are refused: an operator reads each
constexpr size_t max_held_per_ask = 16; // the resolver's A, AAAA and retries; more are dropped (it retries)

enum class Kind { client_udp, client_tcp_listen, client_tcp, upstream_udp, upstream_tcp, proxy_listen };

struct Watch {
    Kind kind;
    uint64_t cgroup_id;
    uint64_t key; // client_tcp: the connection; upstream_tcp: the pending query
    int fd;
};

struct TcpConn {
    uint64_t cgroup_id = 0;
    UniqueFd fd;
    FrameReader in{2 * (max_message + 2)}; // glibc sends A and AAAA on one connection
    Clock::time_point idle_deadline;
    uint64_t watch = 0;
};

// A query held with its ask (dns_gate_asks.cpp).
struct HeldQuery {
    Client client;
    Query query;
    std::vector<uint8_t> message;
};

// A name ask_hosts lists, looked up and held until an operator answers: every
// query of the container for the name (A and AAAA, the resolver's retries)
// waits on the one ask.
struct HeldAsk {
    audit::PendingAsk ask;
    NamePorts ports; // of the ask_hosts entries that match the name (direct)
    std::vector<HeldQuery> queries;
};

// One container's egress proxy, shared by its connections' threads: they may
// outlive the container's entry in the gate.
struct EgressShare {
    std::shared_ptr<const egress::Proxy> proxy;
    UniqueFd netns; // where the upstream connections are made: the agent's network, not the host's
    std::atomic<int> connections{0};
};

// The share of a registration with allowed_http; throws when its CA cannot be read.
std::shared_ptr<EgressShare> egress_share(const Registration& registration, int netns);

struct Container {
    Registration registration;
    NameIndex rules; // the registration's names, indexed
    NameIndex http_hosts; // its allowed_http hosts on their ports: reached through the egress proxy
    NameIndex ask_rules; // the names it asks about
    std::string upstream; // its network namespace and nameservers: the answer cache's share
    std::vector<policy::Cidr> networks;
    std::vector<Endpoint> nameservers;
    UniqueFd netns;
    ino_t netns_inode = 0;
    std::vector<UniqueFd> sockets; // listening and upstream; closed with the container
    int upstream4 = -1, upstream6 = -1;
    std::vector<uint64_t> watches;
    std::optional<audit::TrailWriter> trail; // opened on its first record
    ContainerLimits limits;
    uint16_t port = 0; // of its gate sockets, and of its egress proxy's listener
    std::shared_ptr<EgressShare> egress; // its allowed_http: what the proxy's connections share, and outlive it with
};

class Gate {
public:
    bool start();
    void run();

private:
    void dispatch(const Watch& w, uint32_t events);
    void serve_request();
    std::string serve(uint64_t cgroup_id);
    void add_registered();
    void add(Registration registration);
    void forget(uint64_t cgroup_id);
    void on_tick();
    void read_udp_queries(uint64_t cgroup_id, int fd);
    void accept_proxied(uint64_t cgroup_id, int fd);
    void accept_tcp(uint64_t cgroup_id, int fd);
    bool accept_one(uint64_t cgroup_id, int fd);
    void read_tcp_client(uint64_t conn_id);
    std::map<uint64_t, TcpConn>::iterator close_conn(std::map<uint64_t, TcpConn>::iterator it);
    void handle_query(uint64_t cgroup_id, const Client& client, std::span<const uint8_t> message);
    void refuse_over_rate(Container& container, const Client& client, std::span<const uint8_t> message,
                          Clock::time_point now);
    void forward(Container& container, const Client& client, const Query& query, std::span<const uint8_t> message,
                 NamePorts ports);
    bool answer_from_cache(Container& container, const Client& client, std::span<const uint8_t> message,
                           const NamePorts& ports);
    bool send_upstream(uint64_t pending_id);
    void read_udp_answers(uint64_t cgroup_id, int fd);
    void on_tcp_upstream(uint64_t pending_id, uint32_t events);
    void finish(uint64_t pending_id, std::vector<uint8_t> message, const Answer& answer);
    void drop(uint64_t pending_id);
    void reply(const Client& client, std::span<const uint8_t> message);
    void admit(Container& container, const Question& question, const NamePorts& ports,
               const Answer& answer, uint64_t now_ns);
    void record(Container& container, RecordKind kind, const audit::DnsVerdict& verdict);
    void write_record(Container& container, const audit::DnsVerdict& verdict);
    void write_counts(Container& container);
    void write_snapshot(uint64_t cgroup_id);
    // dns_gate_asks.cpp
    void ask_operator(Container& container, const Client& client, const Query& query, std::span<const uint8_t> message,
                      NamePorts ports);
    std::string answer_ask(const std::string& id, const audit::AskAnswer& answer, uid_t uid);
    void settle_ask(const std::string& id, bool allowed, const std::string& how, std::optional<uid_t> by,
                    const std::string& words);
    void expire_asks_and_grants();
    void recover_asks();
    void forget_asks(uint64_t cgroup_id);

    daemon::Daemon daemon_ = gate_daemon();
    UniqueFd lock_, listener_;
    daemon::EventWatches<Watch> watches_; // key 0: gate.sock
    std::string cgroup2_;
    std::optional<AdmittedTable> table_;
    std::optional<GatePorts> ports_;
    std::optional<ProxyOrigins> origins_; // opened with the first container the egress proxy serves
    std::map<uint64_t, Container> containers_;
    // Containers whose snapshot is behind the map: written at the next tick, or when state asks for it (a
    // file per answer would cost each query).
    std::set<uint64_t> due_snapshots_;
    AnswerCache cache_;
    std::vector<uint8_t> buf_ = std::vector<uint8_t>(max_message); // what each read from a socket takes in
    PendingTable pending_{max_pending_per_container};
    std::map<uint64_t, TcpConn> conns_;
    uint64_t next_conn_ = 1;
    audit::GrantBook grants_{audit::grants_path()};
    std::map<std::string, HeldAsk> asked_; // by ask id
    audit::AnsweredAsks answered_;         // for a late second answer
};

} // namespace cerberus::dns
