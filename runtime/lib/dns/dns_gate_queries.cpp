// SPDX-License-Identifier: Apache-2.0
// The DNS gate's query path: a query read from the agent (UDP, or TCP
// framed), answered REFUSED or sent on to the container's nameserver, its
// answer's addresses admitted, and the answer given back.
#include "dns/dns_gate_loop.hpp"

#include "base/error.hpp"
#include "dns/dns_answers.hpp"
#include "dns/dns_cache.hpp"
#include "dns/dns_netns.hpp"
#include "dns/dns_transport.hpp"

#include <arpa/nameser.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace cerberus::dns {

void Gate::read_udp_queries(uint64_t cgroup_id, int fd)
{
    std::vector<uint8_t>& buf = buf_;
    for (int i = 0; i < 64; ++i) { // then let the other sockets have a turn
        Client client;
        client.udp_fd = fd;
        client.addr_len = sizeof(client.addr);
        ssize_t n = recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&client.addr),
                             &client.addr_len);
        if (n < 0)
            return;
        handle_query(cgroup_id, client, std::span(buf.data(), static_cast<size_t>(n)));
        if (!containers_.count(cgroup_id))
            return;
    }
}

void Gate::accept_tcp(uint64_t cgroup_id, int fd)
{
    for (int i = 0; i < 64; ++i) // then let the other sockets have a turn
        if (!accept_one(cgroup_id, fd))
            return;
}

// False when there was none to accept.
bool Gate::accept_one(uint64_t cgroup_id, int fd)
{
    UniqueFd conn(accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!conn)
        return false;
    Container& container = containers_.at(cgroup_id);
    if (container.limits.tcp_connections >= max_tcp_per_container) {
        // Closed at once: accepted, so that the backlog does not keep the listener ready for nothing.
        record(container, RecordKind::tcp_connections,
               {"", "", "refused", "TCP connections at the limit of " + std::to_string(max_tcp_per_container), ""});
        return true;
    }
    setsockopt(conn.get(), SOL_SOCKET, SO_SNDBUF, &client_send_buffer, sizeof(client_send_buffer));
    ++container.limits.tcp_connections;
    uint64_t id = next_conn_++;
    TcpConn& tcp = conns_[id];
    tcp.cgroup_id = cgroup_id;
    tcp.idle_deadline = Clock::now() + tcp_client_idle;
    tcp.watch = watches_.add({Kind::client_tcp, cgroup_id, id, conn.get()}, EPOLLIN);
    tcp.fd = std::move(conn);
    return true;
}

void Gate::read_tcp_client(uint64_t conn_id)
{
    auto it = conns_.find(conn_id);
    if (it == conns_.end())
        return;
    TcpConn& conn = it->second;
    StreamRead read = read_stream(conn.fd.get(), conn.in);
    if (read == StreamRead::again)
        return;
    if (read == StreamRead::closed) {
        close_conn(it);
        return;
    }
    conn.idle_deadline = Clock::now() + tcp_client_idle;
    uint64_t cgroup_id = conn.cgroup_id;
    while (auto message = conn.in.next()) {
        Client client;
        client.tcp_conn = conn_id;
        handle_query(cgroup_id, client, *message);
        if (!conns_.count(conn_id))
            return;
    }
}

std::map<uint64_t, TcpConn>::iterator Gate::close_conn(std::map<uint64_t, TcpConn>::iterator it)
{
    if (auto container = containers_.find(it->second.cgroup_id); container != containers_.end())
        --container->second.limits.tcp_connections;
    watches_.remove(it->second.watch);
    return conns_.erase(it);
}

void Gate::handle_query(uint64_t cgroup_id, const Client& client, std::span<const uint8_t> message)
{
    Container& container = containers_.at(cgroup_id);
    auto now = Clock::now();
    if (!container.limits.queries.take(now)) {
        refuse_over_rate(container, client, message, now);
        return;
    }
    auto query = parse_query(message);
    if (!query) { // not a query with one question: nothing to forward
        reply(client, formerr_reply(message));
        record(container, RecordKind::name, {"", "", "formerr", "not a query with one question", ""});
        return;
    }
    NamePorts ports{container.rules.ports(query->question.name), container.http_hosts.ports(query->question.name)};
    bool audit = container.registration.audit;
    if (ports.empty() && !audit) // audit mode forwards an asked name unasked, as any name
        if (auto asked = container.ask_rules.ports(query->question.name); !asked.empty())
            return ask_operator(container, client, *query, message, NamePorts{std::move(asked), {}});
    if (ports.empty()) {
        record(container, RecordKind::name,
               {query->question.name, type_name(query->question.type), audit ? "audit" : "refused",
                "not in allowed_hosts", ""});
        if (!audit) {
            reply(client, refused_reply(message));
            return;
        }
        // Audit: answered, and no port opened (admit records the addresses; the programs record each
        // connect to them, with its port, for learn mode).
    }
    forward(container, client, *query, message, std::move(ports));
}

// A query over the container's rate: REFUSED while the refusals' own rate lasts, then dropped and counted
// (write_counts), so that a flood costs the gate a bounded share whatever its speed.
void Gate::refuse_over_rate(Container& container, const Client& client, std::span<const uint8_t> message,
                            Clock::time_point now)
{
    if (!container.limits.refusals.take(now)) {
        ++container.limits.dropped;
        return;
    }
    reply(client, refused_reply(message));
    auto query = parse_query(message);
    record(container, RecordKind::query_rate,
           {query ? query->question.name : "", query ? type_name(query->question.type) : "", "refused",
            "over the query rate of " + std::to_string(static_cast<int>(query_rate)) + " a second", ""});
}

void Gate::forward(Container& container, const Client& client, const Query& query, std::span<const uint8_t> message,
                   NamePorts ports)
{
    if (container.nameservers.empty())
        return;
    if (answer_from_cache(container, client, message, ports))
        return;
    Pending pending;
    pending.cgroup_id = container.registration.cgroup_id;
    pending.client = client;
    pending.client_id = query.id;
    pending.question = query.question;
    pending.ports = std::move(ports);
    pending.query.assign(message.begin(), message.end());
    auto key = pending_.add(std::move(pending));
    if (!key) { // other containers are not held up
        reply(client, error_reply(message, ns_r_servfail));
        record(container, RecordKind::queries_in_flight,
               {query.question.name, type_name(query.question.type), "servfail",
                "queries in flight at the limit of " + std::to_string(max_pending_per_container), ""});
        return;
    }
    Pending& added = *pending_.find(*key);
    set_id(added.query, added.gate_id);
    if (!send_upstream(*key))
        drop(*key);
}

// An answer the container's upstream gave within its TTL, for this query:
// judged and admitted for this container as the fresh answer would be.
bool Gate::answer_from_cache(Container& container, const Client& client, std::span<const uint8_t> message,
                             const NamePorts& ports)
{
    auto shape = query_shape(message);
    if (!shape)
        return false;
    uint64_t now_ns = boot_now_ns();
    auto cached = cache_.lookup(cache_key(container.upstream, *shape), now_ns);
    if (!cached || (!client.tcp_conn && cached->size() > shape->udp_limit))
        return false; // a UDP sender that takes less asks the nameserver, which truncates for it
    auto answer = parse_answer(*cached);
    if (!answer)
        return false;
    admit(container, shape->question, ports, *answer, now_ns);
    answer_for(*cached, message);
    reply(client, *cached);
    return true;
}

// Sends the query to pending.nameserver: UDP for a UDP client, TCP for a TCP one.
bool Gate::send_upstream(uint64_t pending_id)
{
    Pending& pending = *pending_.find(pending_id);
    Container& container = containers_.at(pending.cgroup_id);
    const Endpoint& server = container.nameservers[pending.nameserver];
    sockaddr_storage addr{};
    socklen_t len = sockaddr_of(server, addr);
    if (!pending.client.tcp_conn) {
        pending.deadline = Clock::now() + udp_wait;
        int fd = server.family == AF_INET ? container.upstream4 : container.upstream6;
        return sendto(fd, pending.query.data(), pending.query.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&addr),
                      len) >= 0;
    }
    pending.deadline = Clock::now() + tcp_wait;
    UniqueFd fd;
    try {
        in_netns(container.netns.get(), [&] {
            fd.reset(check(socket(server.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), "socket"));
        });
    } catch (const Error& e) {
        spdlog::warn("cgroup {}: a TCP socket for its nameserver: {}", pending.cgroup_id, e.what());
        return false;
    }
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) < 0 && errno != EINPROGRESS)
        return false;
    pending.tcp_watch = watches_.add({Kind::upstream_tcp, pending.cgroup_id, pending_id, fd.get()}, EPOLLOUT | EPOLLIN);
    pending.tcp = std::move(fd);
    pending.tcp_in = FrameReader(max_message + 2);
    return true;
}

void Gate::on_tcp_upstream(uint64_t pending_id, uint32_t events)
{
    Pending* pending = pending_.find(pending_id);
    if (!pending)
        return;
    if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
        drop(pending_id);
        return;
    }
    if (events & EPOLLOUT) {
        std::vector<uint8_t> framed = frame(pending->query);
        if (send(pending->tcp.get(), framed.data(), framed.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
            static_cast<ssize_t>(framed.size())) {
            drop(pending_id);
            return;
        }
        watches_.change(pending->tcp_watch, EPOLLIN);
        return;
    }
    StreamRead read = read_stream(pending->tcp.get(), pending->tcp_in);
    if (read == StreamRead::again)
        return;
    auto message = read == StreamRead::closed ? std::nullopt : pending->tcp_in.next();
    if (read == StreamRead::more && !message)
        return;
    auto answer = message ? parse_answer(*message) : std::nullopt;
    if (!answer || answer->id != pending->gate_id || answer->question != pending->question) {
        drop(pending_id);
        return;
    }
    finish(pending_id, std::move(*message), *answer);
}

void Gate::read_udp_answers(uint64_t cgroup_id, int fd)
{
    std::vector<uint8_t>& buf = buf_;
    for (int i = 0; i < 64; ++i) {
        sockaddr_storage from{};
        socklen_t from_len = sizeof(from);
        ssize_t n = recvfrom(fd, buf.data(), buf.size(), MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &from_len);
        if (n < 0)
            return;
        std::vector<uint8_t> message(buf.begin(), buf.begin() + n);
        auto answer = parse_answer(message);
        if (!answer)
            continue;
        auto key = pending_.by_gate_id(cgroup_id, answer->id);
        if (!key)
            continue; // late, or forged: no query of ours has that id
        const Pending& pending = *pending_.find(*key);
        // Only the nameserver asked, answering the question asked.
        if (endpoint_of(from) != containers_.at(cgroup_id).nameservers[pending.nameserver] ||
            answer->question != pending.question)
            continue;
        finish(*key, std::move(message), *answer);
    }
}

// Keeps the answer for the container's upstream, admits its addresses, then
// lets it go to the agent.
void Gate::finish(uint64_t pending_id, std::vector<uint8_t> message, const Answer& answer)
{
    Pending& pending = *pending_.find(pending_id);
    Container& container = containers_.at(pending.cgroup_id);
    uint64_t now_ns = boot_now_ns(); // before admission: a later hit's expiry is never past this one's
    if (auto shape = query_shape(pending.query))
        cache_.store(cache_key(container.upstream, *shape), message, now_ns);
    admit(container, pending.question, pending.ports, answer, now_ns);
    set_id(message, pending.client_id);
    reply(pending.client, message);
    drop(pending_id);
}

void Gate::admit(Container& container, const Question& question, const NamePorts& ports,
                 const Answer& answer, uint64_t now_ns)
{
    if (ports.empty()) { // audit mode, a name the policy does not list
        for (const auto& found : answer.addresses)
            record(container, RecordKind::name,
                   {question.name, type_name(question.type), "audit", "not in allowed_hosts",
                    address_text(found.address)});
        return;
    }
    uint64_t cgroup_id = container.registration.cgroup_id;
    AnswerAdmission admitted =
        admit_answer(*table_, cgroup_id, container.networks, question.name, ports, answer.addresses, now_ns);
    for (const auto& [address, why] : admitted.refused)
        record(container, RecordKind::name,
               {question.name, type_name(question.type), "not admitted", why, address_text(address)});
    for (const auto& address : admitted.over_bound)
        record(container, RecordKind::admitted_pairs,
               {question.name, type_name(question.type), "not admitted",
                "name-address pairs admitted at the limit of " + std::to_string(table_->max_per_container()),
                address_text(address)});
    for (const auto& failure : admitted.failed)
        spdlog::warn("cgroup {}: {}", cgroup_id, failure); // the agent gets the answer but cannot connect
    if (admitted.shown_changed || admitted.expiry_only)
        due_snapshots_.insert(cgroup_id);
}

void Gate::drop(uint64_t pending_id)
{
    if (auto pending = pending_.remove(pending_id))
        watches_.remove(pending->tcp_watch);
}

void Gate::reply(const Client& client, std::span<const uint8_t> message)
{
    if (message.empty())
        return;
    if (!client.tcp_conn) {
        sendto(client.udp_fd, message.data(), message.size(), MSG_DONTWAIT,
               reinterpret_cast<const sockaddr*>(&client.addr), client.addr_len);
        return;
    }
    auto it = conns_.find(client.tcp_conn);
    if (it == conns_.end())
        return; // the client went
    std::vector<uint8_t> framed = frame(message);
    // An agent that does not read its answers loses them, not the gate its turn: an answer that does not fit
    // its send buffer (client_send_buffer) would break the stream's framing, so the connection goes.
    if (send(it->second.fd.get(), framed.data(), framed.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(framed.size()))
        close_conn(it);
}

} // namespace cerberus::dns
