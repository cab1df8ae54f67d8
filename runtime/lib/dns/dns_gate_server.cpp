// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_gate_server.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "base/served_containers.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "dns/dns_gate_loop.hpp"
#include "dns/dns_netns.hpp"
#include "dns/dns_transport.hpp"

#include <csignal>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace cerberus::dns {

namespace {

// Each container holds up to seven sockets of the gate's and max_tcp_per_container connections: the usual soft
// limit of 1,024 files would stop a gate serving a few dozen busy containers.
void raise_file_limit()
{
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
}

} // namespace

bool Gate::start()
{
    files::make_dirs(run_dir, 0700);
    lock_ = daemon::open_lock(daemon_);
    if (!daemon::take_lock(daemon_, lock_.get()))
        return false;
    cgroup2_ = cgroups::Mounts::detect().unified;
    raise_file_limit();
    // The egress proxy's TLS writes to sockets with write(): an agent closing its end must not end the gate.
    signal(SIGPIPE, SIG_IGN);
    table_.emplace(kernel::open_map(kernel::names_map));
    ports_.emplace();
    watches_.open();
    // Every registered container first: create waits for the socket, and a
    // restarted gate serves the containers it served before.
    add_registered();
    recover_asks();
    std::set<uint64_t> served;
    std::map<uint64_t, std::vector<Admitted>> snapshots;
    for (const auto& [cgroup_id, container] : containers_) {
        served.insert(cgroup_id);
        snapshots[cgroup_id] = read_admitted(cgroup_id);
    }
    table_->rebuild(served, snapshots);
    for (uint64_t cgroup_id : served)
        write_snapshot(cgroup_id);
    listener_ = daemon::listen(daemon_, watches_.epoll_fd(), {.u64 = watches_.control_key});
    spdlog::info("DNS gate {} started, serving {} containers", getpid(), served.size());
    return true;
}

// Serves every registration not served yet: at start, and each tick (a
// create whose request came while the gate was leaving).
void Gate::add_registered()
{
    auto served = [&](uint64_t cgroup_id) { return containers_.count(cgroup_id) != 0; };
    daemon::add_unserved(
        read_registrations(served), served, [&](Registration registration) { add(std::move(registration)); },
        [&](uint64_t cgroup_id) { forget(cgroup_id); });
}

void Gate::add(Registration registration)
{
    uint64_t cgroup_id = registration.cgroup_id;
    Container container;
    container.networks = networks_of(registration);
    container.rules = NameIndex(registration.names);
    container.http_hosts = NameIndex(http_hosts_of(registration));
    container.ask_rules = NameIndex(registration.ask_names);
    for (const auto& text : registration.nameservers)
        if (auto endpoint = parse_endpoint(text))
            container.nameservers.push_back(*endpoint);
    container.registration = std::move(registration);
    container.netns = netns_of_cgroup(cgroup2_, cgroup_id);
    struct stat netns_stat{};
    check(fstat(container.netns.get(), &netns_stat), "fstat of the container's network namespace");
    container.netns_inode = netns_stat.st_ino;
    std::string netns_name = "net:[" + std::to_string(netns_stat.st_ino) + "]";
    // The same address in two namespaces may be two resolvers; the gate holds the namespace open, so its
    // inode names no other while the container is served.
    container.upstream = netns_name;
    for (const auto& text : container.registration.nameservers)
        container.upstream += " " + text;
    // Each container of a namespace has sockets of its own, on its own port: the socket a query arrives on
    // says whose policy judges it. A restarted gate binds the port the programs steer to already.
    // What the proxy's connections need, ready before any is accepted (its CA's key read here, or create fails).
    auto egress = container.registration.http.empty() ? nullptr
                                                      : egress_share(container.registration, container.netns.get());
    std::optional<uint16_t> recorded = ports_->recorded(cgroup_id);
    GateSockets gate;
    UniqueFd up4, up6;
    try {
        in_netns(container.netns.get(), [&] {
            gate = gate_sockets(recorded.value_or(0), ports_->all(), !container.registration.http.empty());
            for (const auto& server : container.nameservers) {
                UniqueFd& up = server.family == AF_INET ? up4 : up6;
                if (!up)
                    up.reset(check(socket(server.family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0),
                                   "socket for the nameservers"));
            }
        });
    } catch (const Error& e) {
        if (!recorded)
            throw;
        throw e.wrap("binding the DNS gate's port " + std::to_string(*recorded) + " of " +
                     container.registration.id + " again in " + netns_name +
                     ": its lookups fail closed until it is created again");
    }
    ports_->record(cgroup_id, gate.port);
    spdlog::info("serving {} (cgroup {}) on port {} in {}", container.registration.id, cgroup_id, gate.port,
                 netns_name);
    Container& c = containers_.emplace(cgroup_id, std::move(container)).first->second;
    c.upstream4 = up4 ? up4.get() : -1;
    c.upstream6 = up6 ? up6.get() : -1;
    for (auto* fd : {&gate.udp4, &gate.udp6})
        if (*fd) {
            c.watches.push_back(watches_.add({Kind::client_udp, cgroup_id, 0, fd->get()}, EPOLLIN));
            c.sockets.push_back(std::move(*fd));
        }
    for (auto* fd : {&gate.tcp4, &gate.tcp6})
        if (*fd) {
            c.watches.push_back(watches_.add({Kind::client_tcp_listen, cgroup_id, 0, fd->get()}, EPOLLIN));
            c.sockets.push_back(std::move(*fd));
        }
    for (auto* fd : {&up4, &up6})
        if (*fd) {
            c.watches.push_back(watches_.add({Kind::upstream_udp, cgroup_id, 0, fd->get()}, EPOLLIN));
            c.sockets.push_back(std::move(*fd));
        }
    c.port = gate.port;
    c.egress = std::move(egress);
    if (gate.proxy) {
        c.watches.push_back(watches_.add({Kind::proxy_listen, cgroup_id, 0, gate.proxy.get()}, EPOLLIN));
        c.sockets.push_back(std::move(gate.proxy));
    }
}

void Gate::forget(uint64_t cgroup_id)
{
    forget_asks(cgroup_id);
    for (const Pending& pending : pending_.remove_container(cgroup_id))
        watches_.remove(pending.tcp_watch);
    for (auto it = conns_.begin(); it != conns_.end();)
        it = it->second.cgroup_id == cgroup_id ? close_conn(it) : std::next(it);
    if (auto it = containers_.find(cgroup_id); it != containers_.end()) {
        write_counts(it->second);
        for (uint64_t id : it->second.watches)
            watches_.remove(id);
        std::string upstream = it->second.upstream;
        containers_.erase(it);
        if (std::none_of(containers_.begin(), containers_.end(),
                         [&](const auto& other) { return other.second.upstream == upstream; }))
            cache_.forget_upstream(upstream);
    }
    due_snapshots_.erase(cgroup_id);
    table_->forget(cgroup_id);
    ports_->forget(cgroup_id);
    try {
        remove_registration(cgroup_id);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

std::string Gate::serve(uint64_t cgroup_id)
{
    std::string answer = daemon::serve_registration(registration_path(cgroup_id), cgroup_id,
                                                    containers_.count(cgroup_id) != 0,
                                                    [&](const nlohmann::json& j) { add(registration_from_json(j)); });
    if (answer == "ok")
        write_snapshot(cgroup_id);
    return answer;
}

// "serve <cgroup id>" (create), "forget <cgroup id>" (delete), "snapshot
// <cgroup id>" (state: what was admitted, written now if it is due), and an
// operator's answer or revocation (dns_gate_asks.cpp).
void Gate::serve_request()
{
    daemon::answer_container_request_of_peer(
        listener_.get(), [&](uint64_t cgroup_id) { return serve(cgroup_id); },
        [&](uint64_t cgroup_id) { forget(cgroup_id); },
        [&](const std::string& request, const ucred& peer) -> std::string {
            if (!request.starts_with("snapshot "))
                return audit::answer_operator(
                    request, peer.uid,
                    [&](const std::string& id, const audit::AskAnswer& answer, uid_t uid) {
                        return answer_ask(id, answer, uid);
                    },
                    grants_);
            uint64_t cgroup_id = std::strtoull(request.c_str() + 9, nullptr, 10);
            if (!containers_.count(cgroup_id))
                return "not served";
            if (due_snapshots_.erase(cgroup_id))
                write_snapshot(cgroup_id);
            return "ok";
        });
}

// Within the container's rate of records of that kind; the rest counted, and the count written each tick.
void Gate::record(Container& container, RecordKind kind, const audit::DnsVerdict& verdict)
{
    if (!container.limits.records[static_cast<size_t>(kind)].take(Clock::now())) {
        ++container.limits.unrecorded;
        return;
    }
    write_record(container, verdict);
}

// What the limits kept out since the last tick: at most two records a second, whatever the flood.
void Gate::write_counts(Container& container)
{
    ContainerLimits& limits = container.limits;
    if (limits.dropped)
        write_record(container, {"", "", "dropped",
                                 std::to_string(std::exchange(limits.dropped, 0)) +
                                     " queries over the query rate and the refusals' rate, not answered",
                                 ""});
    if (limits.unrecorded)
        write_record(container, {"", "", "not recorded",
                                 std::to_string(std::exchange(limits.unrecorded, 0)) +
                                     " records over the trail's rates (" +
                                     std::to_string(static_cast<int>(record_rate)) + " a second for names, " +
                                     std::to_string(static_cast<int>(limit_record_rate)) + " for each limit)",
                                 ""});
}

void Gate::write_record(Container& container, const audit::DnsVerdict& verdict)
{
    if (!container.trail)
        container.trail.emplace(container.registration.trail);
    container.trail->append(audit::dns_json(container.registration.id, audit::wall_now_ns(), verdict));
}

void Gate::write_snapshot(uint64_t cgroup_id)
{
    try {
        write_admitted(cgroup_id, table_->of(cgroup_id));
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

void Gate::on_tick()
{
    auto now = Clock::now();
    expire_asks_and_grants();
    for (uint64_t cgroup_id : table_->expire(boot_now_ns()))
        due_snapshots_.insert(cgroup_id);
    for (uint64_t cgroup_id : std::exchange(due_snapshots_, {}))
        if (containers_.count(cgroup_id))
            write_snapshot(cgroup_id);
    for (uint64_t id : pending_.due(now)) {
        Pending& pending = *pending_.find(id);
        Container& container = containers_.at(pending.cgroup_id);
        if (!pending.client.tcp_conn && pending.nameserver + 1 < container.nameservers.size()) {
            ++pending.nameserver; // as the resolver would: the next nameserver of resolv.conf
            if (send_upstream(id))
                continue;
        }
        drop(id);
    }
    for (auto it = conns_.begin(); it != conns_.end();)
        it = it->second.idle_deadline <= now ? close_conn(it) : std::next(it);
    for (auto& [cgroup_id, container] : containers_)
        write_counts(container);
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
    daemon::Life life{daemon_, lock_.get(), watches_.epoll_fd(), listener_, {.u64 = watches_.control_key}, tick,
                      idle_linger,
                      [&](const epoll_event& event) {
                          watches_.route(
                              event, [&] { serve_request(); },
                              [&](const Watch& w, uint32_t events) { dispatch(w, events); });
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
    case Kind::proxy_listen:
        accept_proxied(w.cgroup_id, w.fd);
        break;
    }
}


int run_gate()
{
    Gate gate;
    return daemon::run("DNS gate", [&] { return gate.start(); }, [&] { gate.run(); });
}

} // namespace cerberus::dns
