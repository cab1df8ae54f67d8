// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_gate_server.hpp"

#include "audit/audit_format.hpp"
#include "base/daemon.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "dns/dns_admission.hpp"
#include "dns/dns_answers.hpp"
#include "dns/dns_gate_registry.hpp"
#include "dns/dns_netns.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <utility>
#include <vector>

namespace cerberus::dns {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto tick = std::chrono::seconds(1); // expiry, deadlines, gone containers, exit check
constexpr auto idle_linger = std::chrono::seconds(10); // as the audit collector: bursts share one gate
constexpr auto udp_wait = std::chrono::seconds(2); // per nameserver, then the next one
constexpr auto tcp_wait = std::chrono::seconds(5);
constexpr auto tcp_client_idle = std::chrono::seconds(10);
constexpr size_t max_pending_per_container = 256; // a flooding agent only delays its own answers
constexpr size_t max_message = 65535;
constexpr uint16_t dns_port = CERB_DNS_PORT;

constexpr uint64_t control_watch = 0; // the epoll data of gate.sock; the others are keys of Gate::watches_

enum class Kind { client_udp, client_tcp_listen, client_tcp, upstream_udp, upstream_tcp };

struct Watch {
    Kind kind;
    uint64_t cgroup_id;
    uint64_t key; // client_tcp: the connection; upstream_tcp: the pending query
    int fd;
};

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
    uint16_t client_id = 0;
    uint16_t gate_id = 0;
    Question question;
    std::vector<policy::PortRange> ports; // what the name's rules allow (every port in audit mode)
    std::vector<uint8_t> query; // with the gate's id
    size_t nameserver = 0;
    Clock::time_point deadline;
    UniqueFd tcp; // a TCP query to the nameserver
    std::vector<uint8_t> tcp_in;
    uint64_t tcp_watch = 0;
};

struct TcpConn {
    uint64_t cgroup_id = 0;
    UniqueFd fd;
    std::vector<uint8_t> in;
    Clock::time_point idle_deadline;
    uint64_t watch = 0;
};

struct Container {
    Registration registration;
    std::vector<policy::Cidr> networks;
    std::vector<Endpoint> nameservers;
    UniqueFd netns;
    ino_t netns_inode = 0;
    std::vector<UniqueFd> sockets; // listening and upstream; closed with the container
    int upstream4 = -1, upstream6 = -1;
    std::vector<uint64_t> watches;
    UniqueFd trail;
    size_t pending = 0;
};

Endpoint endpoint_of(const sockaddr_storage& addr)
{
    Endpoint endpoint;
    if (addr.ss_family == AF_INET) {
        const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
        endpoint.family = AF_INET;
        std::memcpy(endpoint.addr.data(), &in.sin_addr, 4);
        endpoint.port = ntohs(in.sin_port);
    } else if (addr.ss_family == AF_INET6) {
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
        endpoint.family = AF_INET6;
        std::memcpy(endpoint.addr.data(), &in6.sin6_addr, 16);
        endpoint.port = ntohs(in6.sin6_port);
    }
    return endpoint;
}

socklen_t sockaddr_of(const Endpoint& endpoint, sockaddr_storage& addr)
{
    addr = {};
    if (endpoint.family == AF_INET) {
        auto& in = reinterpret_cast<sockaddr_in&>(addr);
        in.sin_family = AF_INET;
        in.sin_port = htons(endpoint.port);
        std::memcpy(&in.sin_addr, endpoint.addr.data(), 4);
        return sizeof(sockaddr_in);
    }
    auto& in6 = reinterpret_cast<sockaddr_in6&>(addr);
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(endpoint.port);
    std::memcpy(&in6.sin6_addr, endpoint.addr.data(), 16);
    return sizeof(sockaddr_in6);
}

// A gate socket in the container's namespace; an empty fd when the address
// is not there (a namespace without ::1, a kernel without IPv6).
UniqueFd gate_socket(int family, int type)
{
    UniqueFd fd(socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd && family == AF_INET6 && errno == EAFNOSUPPORT)
        return fd;
    if (!fd)
        throw_errno("socket");
    int on = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    Endpoint endpoint{family, {}, dns_port};
    if (family == AF_INET) {
        uint32_t gate = htonl(CERB_DNS_GATE_IP4);
        std::memcpy(endpoint.addr.data(), &gate, 4);
    } else {
        setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
        endpoint.addr[15] = 1;
    }
    sockaddr_storage addr{};
    socklen_t len = sockaddr_of(endpoint, addr);
    if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) < 0) {
        if (family == AF_INET6 && errno == EADDRNOTAVAIL)
            return UniqueFd();
        throw_errno(family == AF_INET ? "binding 127.53.0.1:53" : "binding [::1]:53");
    }
    if (type == SOCK_STREAM)
        check(listen(fd.get(), 64), "listen");
    return fd;
}

int64_t wall_ns()
{
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return int64_t{now.tv_sec} * 1000000000 + now.tv_nsec;
}

class Gate {
public:
    bool start();
    void run();

private:
    uint64_t watch(Kind kind, uint64_t cgroup_id, uint64_t key, int fd, uint32_t events);
    void unwatch(uint64_t id);
    void dispatch(const Watch& w, uint32_t events);
    void serve_request();
    std::string serve(uint64_t cgroup_id);
    void add_registered();
    void add(Registration registration);
    void forget(uint64_t cgroup_id);
    void on_tick();
    void read_udp_queries(uint64_t cgroup_id, int fd);
    void accept_tcp(uint64_t cgroup_id, int fd);
    void read_tcp_client(uint64_t conn_id);
    void handle_query(uint64_t cgroup_id, const Client& client, std::span<const uint8_t> message);
    void forward(Container& container, const Client& client, const Query& query, std::span<const uint8_t> message,
                 std::vector<policy::PortRange> ports);
    bool send_upstream(uint64_t pending_id);
    void read_udp_answers(uint64_t cgroup_id, int fd);
    void on_tcp_upstream(uint64_t pending_id, uint32_t events);
    void finish(uint64_t pending_id, std::vector<uint8_t> message, const Answer& answer);
    void drop(uint64_t pending_id);
    void reply(const Client& client, std::span<const uint8_t> message);
    void admit(Container& container, const Pending& pending, const Answer& answer);
    void record(Container& container, const audit::DnsVerdict& verdict);
    void write_snapshot(uint64_t cgroup_id);
    uint16_t fresh_gate_id(uint64_t cgroup_id);

    daemon::Daemon daemon_ = gate_daemon();
    UniqueFd lock_, listener_, epoll_;
    std::string cgroup2_;
    std::optional<AdmittedTable> table_;
    std::map<uint64_t, Container> containers_;
    std::set<uint64_t> stale_expiries_; // containers whose snapshot shows an earlier expiry than the map
    std::map<uint64_t, Watch> watches_;
    std::map<uint64_t, Pending> pending_;
    std::map<std::pair<uint64_t, uint16_t>, uint64_t> by_gate_id_; // UDP: (cgroup, id) -> pending
    std::map<uint64_t, TcpConn> conns_;
    uint64_t next_key_ = 1;
};

uint64_t Gate::watch(Kind kind, uint64_t cgroup_id, uint64_t key, int fd, uint32_t events)
{
    uint64_t id = next_key_++;
    epoll_event ev{.events = events, .data = {.u64 = id}};
    check(epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev), "epoll_ctl");
    watches_[id] = {kind, cgroup_id, key, fd};
    return id;
}

void Gate::unwatch(uint64_t id)
{
    if (auto it = watches_.find(id); it != watches_.end()) {
        epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second.fd, nullptr);
        watches_.erase(it);
    }
}

bool Gate::start()
{
    files::make_dirs(run_dir, 0700);
    lock_ = daemon::open_lock(daemon_);
    if (!daemon::take_lock(daemon_, lock_.get()))
        return false;
    cgroup2_ = cgroups::Mounts::detect().unified;
    table_.emplace(kernel::open_map(kernel::names_map));
    epoll_.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!epoll_)
        throw_errno("epoll_create1");
    // Every registered container first: create waits for the socket, and a
    // restarted gate serves the containers it served before.
    add_registered();
    std::set<uint64_t> served;
    std::map<uint64_t, std::vector<Admitted>> snapshots;
    for (const auto& [cgroup_id, container] : containers_) {
        served.insert(cgroup_id);
        snapshots[cgroup_id] = read_admitted(cgroup_id);
    }
    table_->rebuild(served, snapshots);
    for (uint64_t cgroup_id : served)
        write_snapshot(cgroup_id);
    listener_ = daemon::listen(daemon_, epoll_.get(), {.u64 = control_watch});
    spdlog::info("DNS gate {} started, serving {} containers", getpid(), served.size());
    return true;
}

// Serves every registration not served yet: at start, and each tick (a
// create whose request came while the gate was leaving).
void Gate::add_registered()
{
    for (auto& registration : read_registrations()) {
        uint64_t cgroup_id = registration.cgroup_id;
        if (containers_.count(cgroup_id))
            continue;
        try {
            add(std::move(registration));
        } catch (const Error& e) {
            spdlog::warn("cgroup {}: {}; forgotten", cgroup_id, e.what());
            forget(cgroup_id);
        }
    }
}

void Gate::add(Registration registration)
{
    uint64_t cgroup_id = registration.cgroup_id;
    Container container;
    container.networks = networks_of(registration);
    for (const auto& text : registration.nameservers)
        if (auto endpoint = parse_endpoint(text))
            container.nameservers.push_back(*endpoint);
    container.registration = std::move(registration);
    container.netns = netns_of_cgroup(cgroup2_, cgroup_id);
    struct stat netns_stat{};
    check(fstat(container.netns.get(), &netns_stat), "fstat of the container's network namespace");
    container.netns_inode = netns_stat.st_ino;
    // The gate's address is the same in every namespace, and a query carries no sign of whose container
    // sent it: one container with names per namespace.
    for (const auto& [other_id, other] : containers_)
        if (other.netns_inode == netns_stat.st_ino && other_id != cgroup_id)
            throw Error("network namespace net:[" + std::to_string(netns_stat.st_ino) + "] is served for " +
                            other.registration.id +
                            " already: the DNS gate serves one container with host names per network namespace",
                        EBUSY);
    UniqueFd udp4, tcp4, udp6, tcp6, up4, up6;
    in_netns(container.netns.get(), [&] {
        udp4 = gate_socket(AF_INET, SOCK_DGRAM);
        tcp4 = gate_socket(AF_INET, SOCK_STREAM);
        udp6 = gate_socket(AF_INET6, SOCK_DGRAM);
        if (udp6)
            tcp6 = gate_socket(AF_INET6, SOCK_STREAM);
        for (const auto& server : container.nameservers) {
            UniqueFd& up = server.family == AF_INET ? up4 : up6;
            if (!up)
                up.reset(check(socket(server.family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0),
                               "socket for the nameservers"));
        }
    });
    Container& c = containers_.emplace(cgroup_id, std::move(container)).first->second;
    c.upstream4 = up4 ? up4.get() : -1;
    c.upstream6 = up6 ? up6.get() : -1;
    for (auto* fd : {&udp4, &udp6})
        if (*fd) {
            c.watches.push_back(watch(Kind::client_udp, cgroup_id, 0, fd->get(), EPOLLIN));
            c.sockets.push_back(std::move(*fd));
        }
    for (auto* fd : {&tcp4, &tcp6})
        if (*fd) {
            c.watches.push_back(watch(Kind::client_tcp_listen, cgroup_id, 0, fd->get(), EPOLLIN));
            c.sockets.push_back(std::move(*fd));
        }
    for (auto* fd : {&up4, &up6})
        if (*fd) {
            c.watches.push_back(watch(Kind::upstream_udp, cgroup_id, 0, fd->get(), EPOLLIN));
            c.sockets.push_back(std::move(*fd));
        }
}

void Gate::forget(uint64_t cgroup_id)
{
    for (auto it = pending_.begin(); it != pending_.end();)
        it = it->second.cgroup_id == cgroup_id ? (unwatch(it->second.tcp_watch), pending_.erase(it)) : std::next(it);
    std::erase_if(by_gate_id_, [&](const auto& entry) { return entry.first.first == cgroup_id; });
    for (auto it = conns_.begin(); it != conns_.end();)
        it = it->second.cgroup_id == cgroup_id ? (unwatch(it->second.watch), conns_.erase(it)) : std::next(it);
    if (auto it = containers_.find(cgroup_id); it != containers_.end()) {
        for (uint64_t id : it->second.watches)
            unwatch(id);
        containers_.erase(it);
    }
    table_->forget(cgroup_id);
    try {
        remove_registration(cgroup_id);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

std::string Gate::serve(uint64_t cgroup_id)
{
    try {
        auto text = files::read_file_if_exists(registration_path(cgroup_id));
        if (!text)
            return "no registration " + registration_path(cgroup_id);
        if (!containers_.count(cgroup_id)) // else a tick found the registration first
            add(registration_from_json(nlohmann::json::parse(*text)));
        write_snapshot(cgroup_id);
        return "ok";
    } catch (const std::exception& e) {
        return std::string("serving cgroup ") + std::to_string(cgroup_id) + ": " + e.what();
    }
}

// "serve <cgroup id>" (create), "forget <cgroup id>" (delete).
void Gate::serve_request()
{
    daemon::answer_request(listener_.get(), [&](const std::string& request) -> std::string {
        if (request.rfind("serve ", 0) == 0)
            return serve(std::strtoull(request.c_str() + 6, nullptr, 10));
        if (request.rfind("forget ", 0) != 0)
            return "unknown request";
        forget(std::strtoull(request.c_str() + 7, nullptr, 10));
        return "ok";
    });
}

void Gate::record(Container& container, const audit::DnsVerdict& verdict)
{
    const std::string& path = container.registration.trail;
    if (!container.trail) {
        container.trail.reset(open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
        if (!container.trail) {
            spdlog::warn("opening the trail {}: {}; a dns record is lost", path, std::strerror(errno));
            return;
        }
    }
    std::string line = audit::dump_line(audit::dns_json(container.registration.id, wall_ns(), verdict)) + "\n";
    if (write(container.trail.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
        spdlog::warn("writing the trail {}: {}", path, std::strerror(errno));
}

void Gate::write_snapshot(uint64_t cgroup_id)
{
    try {
        write_admitted(cgroup_id, table_->of(cgroup_id));
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

void Gate::read_udp_queries(uint64_t cgroup_id, int fd)
{
    std::vector<uint8_t> buf(max_message);
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
    UniqueFd conn(accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!conn)
        return;
    uint64_t id = next_key_++;
    TcpConn& tcp = conns_[id];
    tcp.cgroup_id = cgroup_id;
    tcp.idle_deadline = Clock::now() + tcp_client_idle;
    tcp.watch = watch(Kind::client_tcp, cgroup_id, id, conn.get(), EPOLLIN);
    tcp.fd = std::move(conn);
}

void Gate::read_tcp_client(uint64_t conn_id)
{
    auto it = conns_.find(conn_id);
    if (it == conns_.end())
        return;
    TcpConn& conn = it->second;
    uint8_t buf[4096];
    ssize_t n = recv(conn.fd.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n <= 0 || conn.in.size() + static_cast<size_t>(n) > 2 * (max_message + 2)) {
        if (n < 0 && errno == EAGAIN)
            return;
        unwatch(conn.watch);
        conns_.erase(it);
        return;
    }
    conn.in.insert(conn.in.end(), buf, buf + n);
    conn.idle_deadline = Clock::now() + tcp_client_idle;
    // Each complete message (2 bytes of length, then the message); glibc sends A and AAAA on one connection.
    while (conn.in.size() >= 2) {
        size_t len = (size_t{conn.in[0]} << 8) | conn.in[1];
        if (conn.in.size() < 2 + len)
            break;
        std::vector<uint8_t> message(conn.in.begin() + 2, conn.in.begin() + 2 + static_cast<long>(len));
        conn.in.erase(conn.in.begin(), conn.in.begin() + 2 + static_cast<long>(len));
        Client client;
        client.tcp_conn = conn_id;
        uint64_t cgroup_id = conn.cgroup_id;
        handle_query(cgroup_id, client, message);
        if (!conns_.count(conn_id))
            return;
    }
}

void Gate::handle_query(uint64_t cgroup_id, const Client& client, std::span<const uint8_t> message)
{
    auto query = parse_query(message);
    if (!query)
        return; // not a query with one question: nothing to forward or answer
    Container& container = containers_.at(cgroup_id);
    auto ports = ports_for(container.registration.names, query->question.name);
    if (ports.empty()) {
        bool audit = container.registration.audit;
        record(container, {query->question.name, type_name(query->question.type), audit ? "audit" : "refused",
                           "not in allowed_hosts", ""});
        if (!audit) {
            reply(client, refused_reply(message));
            return;
        }
        ports = {policy::PortRange{}}; // audit: admitted as if allowed, every port
    }
    forward(container, client, *query, message, std::move(ports));
}

uint16_t Gate::fresh_gate_id(uint64_t cgroup_id)
{
    for (;;) {
        uint16_t id = 0;
        if (getrandom(&id, sizeof(id), 0) != sizeof(id))
            throw_errno("getrandom");
        if (!by_gate_id_.count({cgroup_id, id}))
            return id;
    }
}

void Gate::forward(Container& container, const Client& client, const Query& query, std::span<const uint8_t> message,
                   std::vector<policy::PortRange> ports)
{
    uint64_t cgroup_id = container.registration.cgroup_id;
    if (container.pending >= max_pending_per_container || container.nameservers.empty())
        return; // the resolver retries; other containers are not held up
    uint64_t id = next_key_++;
    Pending& pending = pending_[id];
    pending.cgroup_id = cgroup_id;
    pending.client = client;
    pending.client_id = query.id;
    pending.gate_id = fresh_gate_id(cgroup_id);
    pending.question = query.question;
    pending.ports = std::move(ports);
    pending.query.assign(message.begin(), message.end());
    set_id(pending.query, pending.gate_id);
    ++container.pending;
    if (!client.tcp_conn)
        by_gate_id_[{cgroup_id, pending.gate_id}] = id;
    if (!send_upstream(id))
        drop(id);
}

// Sends the query to pending.nameserver: UDP for a UDP client, TCP for a TCP one.
bool Gate::send_upstream(uint64_t pending_id)
{
    Pending& pending = pending_.at(pending_id);
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
    pending.tcp_watch = watch(Kind::upstream_tcp, pending.cgroup_id, pending_id, fd.get(), EPOLLOUT | EPOLLIN);
    pending.tcp = std::move(fd);
    pending.tcp_in.clear();
    return true;
}

void Gate::on_tcp_upstream(uint64_t pending_id, uint32_t events)
{
    auto it = pending_.find(pending_id);
    if (it == pending_.end())
        return;
    Pending& pending = it->second;
    if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
        drop(pending_id);
        return;
    }
    if (events & EPOLLOUT) {
        std::vector<uint8_t> framed{static_cast<uint8_t>(pending.query.size() >> 8),
                                    static_cast<uint8_t>(pending.query.size())};
        framed.insert(framed.end(), pending.query.begin(), pending.query.end());
        if (send(pending.tcp.get(), framed.data(), framed.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
            static_cast<ssize_t>(framed.size())) {
            drop(pending_id);
            return;
        }
        epoll_event ev{.events = EPOLLIN, .data = {.u64 = pending.tcp_watch}};
        epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, pending.tcp.get(), &ev);
        return;
    }
    uint8_t buf[4096];
    ssize_t n = recv(pending.tcp.get(), buf, sizeof(buf), MSG_DONTWAIT);
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0 || pending.tcp_in.size() + static_cast<size_t>(n) > max_message + 2) {
        drop(pending_id);
        return;
    }
    pending.tcp_in.insert(pending.tcp_in.end(), buf, buf + n);
    if (pending.tcp_in.size() < 2)
        return;
    size_t len = (size_t{pending.tcp_in[0]} << 8) | pending.tcp_in[1];
    if (pending.tcp_in.size() < 2 + len)
        return;
    std::vector<uint8_t> message(pending.tcp_in.begin() + 2, pending.tcp_in.begin() + 2 + static_cast<long>(len));
    auto answer = parse_answer(message);
    if (!answer || answer->id != pending.gate_id || answer->question != pending.question) {
        drop(pending_id);
        return;
    }
    finish(pending_id, std::move(message), *answer);
}

void Gate::read_udp_answers(uint64_t cgroup_id, int fd)
{
    std::vector<uint8_t> buf(max_message);
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
        auto key = by_gate_id_.find({cgroup_id, answer->id});
        if (key == by_gate_id_.end())
            continue; // late, or forged: no query of ours has that id
        Pending& pending = pending_.at(key->second);
        // Only the nameserver asked, answering the question asked.
        if (endpoint_of(from) != containers_.at(cgroup_id).nameservers[pending.nameserver] ||
            answer->question != pending.question)
            continue;
        finish(key->second, std::move(message), *answer);
    }
}

// Admits the answer's addresses, then lets the answer go to the agent.
void Gate::finish(uint64_t pending_id, std::vector<uint8_t> message, const Answer& answer)
{
    Pending& pending = pending_.at(pending_id);
    Container& container = containers_.at(pending.cgroup_id);
    admit(container, pending, answer);
    set_id(message, pending.client_id);
    reply(pending.client, message);
    drop(pending_id);
}

void Gate::admit(Container& container, const Pending& pending, const Answer& answer)
{
    uint64_t cgroup_id = container.registration.cgroup_id;
    uint64_t now = boot_now_ns();
    bool changed = false;
    for (const auto& record : answer.addresses) {
        if (auto why = refusal(record.address, container.networks)) {
            this->record(container, {pending.question.name, type_name(pending.question.type), "not admitted", *why,
                                     address_text(record.address)});
            continue;
        }
        cerb_name_value value{};
        value.expires_ns = now + clamp_ttl_ns(record.ttl);
        value.ports = net_value(pending.ports);
        try {
            if (table_->admit(cgroup_id, pending.question.name, record.address, value))
                changed = true;
            else
                stale_expiries_.insert(cgroup_id); // shown at the next tick: a file per answer would cost each query
        } catch (const Error& e) {
            spdlog::warn("cgroup {}: {}", cgroup_id, e.what()); // the agent gets the answer but cannot connect
        }
    }
    if (changed)
        write_snapshot(cgroup_id);
}

void Gate::drop(uint64_t pending_id)
{
    auto it = pending_.find(pending_id);
    if (it == pending_.end())
        return;
    Pending& pending = it->second;
    if (auto c = containers_.find(pending.cgroup_id); c != containers_.end())
        --c->second.pending;
    by_gate_id_.erase({pending.cgroup_id, pending.gate_id});
    unwatch(pending.tcp_watch);
    pending_.erase(it);
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
    std::vector<uint8_t> framed{static_cast<uint8_t>(message.size() >> 8), static_cast<uint8_t>(message.size())};
    framed.insert(framed.end(), message.begin(), message.end());
    // An agent that does not read its answers loses them, not the gate its turn.
    send(it->second.fd.get(), framed.data(), framed.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
}

void Gate::on_tick()
{
    auto now = Clock::now();
    for (uint64_t cgroup_id : table_->expire(boot_now_ns()))
        stale_expiries_.insert(cgroup_id);
    for (uint64_t cgroup_id : std::exchange(stale_expiries_, {}))
        if (containers_.count(cgroup_id))
            write_snapshot(cgroup_id);
    std::vector<uint64_t> late;
    for (auto& [id, pending] : pending_)
        if (pending.deadline <= now)
            late.push_back(id);
    for (uint64_t id : late) {
        Pending& pending = pending_.at(id);
        Container& container = containers_.at(pending.cgroup_id);
        if (!pending.client.tcp_conn && pending.nameserver + 1 < container.nameservers.size()) {
            ++pending.nameserver; // as the resolver would: the next nameserver of resolv.conf
            if (send_upstream(id))
                continue;
        }
        drop(id);
    }
    for (auto it = conns_.begin(); it != conns_.end();)
        it = it->second.idle_deadline <= now ? (unwatch(it->second.watch), conns_.erase(it)) : std::next(it);
    // A delete that found no gate removed the registration; a cgroup may go without a delete.
    std::vector<uint64_t> gone;
    for (const auto& [cgroup_id, container] : containers_)
        if (!files::exists(registration_path(cgroup_id)) || !cgroup_exists(cgroup2_, cgroup_id))
            gone.push_back(cgroup_id);
    for (uint64_t cgroup_id : gone)
        forget(cgroup_id);
    add_registered();
}

void Gate::run()
{
    daemon::Life life{daemon_, lock_.get(), epoll_.get(), listener_, {.u64 = control_watch}, tick, idle_linger,
                      [&](const epoll_event& event) {
                          if (event.data.u64 == control_watch) {
                              serve_request();
                              return;
                          }
                          if (auto it = watches_.find(event.data.u64); it != watches_.end()) {
                              Watch w = it->second; // dispatch may unwatch it
                              dispatch(w, event.events);
                          }
                      },
                      [&] {
                          on_tick();
                          return !containers_.empty();
                      },
                      [&] { return !read_registrations().empty(); }};
    life.serve();
}

void Gate::dispatch(const Watch& w, uint32_t events)
{
    switch (w.kind) {
    case Kind::client_udp:
        read_udp_queries(w.cgroup_id, w.fd);
        break;
    case Kind::client_tcp_listen:
        accept_tcp(w.cgroup_id, w.fd);
        break;
    case Kind::client_tcp:
        read_tcp_client(w.key);
        break;
    case Kind::upstream_udp:
        read_udp_answers(w.cgroup_id, w.fd);
        break;
    case Kind::upstream_tcp:
        on_tcp_upstream(w.key, events);
        break;
    }
}

} // namespace

int run_gate()
{
    Gate gate;
    return daemon::run("DNS gate", [&] { return gate.start(); }, [&] { gate.run(); });
}

} // namespace cerberus::dns
