// SPDX-License-Identifier: Apache-2.0
// The DNS gate's part in the egress proxy (egress/): a listener in each
// container's network namespace whose policy has allowed_http, where the
// socket programs send its TCP connects to the addresses the gate admitted
// for those hosts. Each connection is served on a thread of its own, told
// where it was going (the programs' record of it) and which names the gate
// admitted for that address, its upstream made in the container's namespace.
#include "audit/audit_format.hpp"
#include "audit/audit_trail.hpp"
#include "base/error.hpp"
#include "dns/dns_gate_loop.hpp"
#include "dns/dns_netns.hpp"
#include "dns/dns_transport.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <spdlog/spdlog.h>

#include <set>
#include <string>
#include <thread>

namespace cerberus::dns {

namespace {

constexpr int max_proxied_per_container = 128; // connections open at once; more are closed at once (the log says so)
constexpr timeval upstream_connect_wait{10, 0};

std::string endpoint_text(const Endpoint& endpoint)
{
    std::string address = address_text(address_of(endpoint));
    return (endpoint.family == AF_INET6 ? "[" + address + "]" : address) + ":" + std::to_string(endpoint.port);
}

audit::HttpExchange exchange_of(const egress::HttpRecord& record, const std::string& address)
{
    std::string verdict = record.audited ? "audit" : record.allowed ? "allowed" : "denied";
    return {record.kind, verdict, record.server_name, record.method, record.url,
            address,     record.rule, record.reason, record.status, record.credential};
}

// A TCP connection to where the agent was going, from the agent's network namespace (the gate's own network
// is not the agent's to reach); the socket belongs to the gate's cgroup, so no program of the container's steers it.
UniqueFd connect_upstream(int netns, const Endpoint& original)
{
    UniqueFd fd;
    in_netns(netns, [&] { fd.reset(check(socket(original.family, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket")); });
    setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &upstream_connect_wait, sizeof(upstream_connect_wait));
    sockaddr_storage addr{};
    socklen_t len = sockaddr_of(original, addr);
    check(connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len), "connecting to " + endpoint_text(original));
    timeval none{};
    setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &none, sizeof(none));
    return fd;
}

} // namespace

std::shared_ptr<EgressShare> egress_share(const Registration& registration, int netns)
{
    auto share = std::make_shared<EgressShare>();
    share->proxy =
        egress::proxy_for(registration.id, registration.cgroup_id, registration.http, registration.audit,
                          registration.egress_dir);
    share->netns.reset(check(fcntl(netns, F_DUPFD_CLOEXEC, 0), "duplicating the network namespace's fd"));
    return share;
}

void Gate::accept_proxied(uint64_t cgroup_id, int fd)
{
    Container& container = containers_.at(cgroup_id);
    if (!origins_)
        origins_.emplace();
    for (int i = 0; i < 64; ++i) { // then let the other sockets have a turn
        sockaddr_storage peer{};
        socklen_t len = sizeof(peer);
        UniqueFd client(accept4(fd, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC));
        if (!client)
            return;
        auto original = origins_->take(container.port, endpoint_of(peer).port);
        if (!original)
            continue; // dialled to the listener's address: nowhere to go
        std::shared_ptr<EgressShare> share = container.egress;
        if (share->connections >= max_proxied_per_container) {
            spdlog::warn("cgroup {}: {} proxied connections open: one to {} closed", cgroup_id,
                         max_proxied_per_container, endpoint_text(*original));
            continue;
        }
        ++share->connections;
        std::set<std::string> names = table_->names_at(cgroup_id, address_of(*original));
        egress::Connection connection{
            .original = {original->family, original->addr, original->port},
            .admitted = [names](const std::string& name) { return names.count(name) != 0; },
            .connect_upstream = [share, to = *original] { return connect_upstream(share->netns.get(), to); },
            .record =
                [share, trail = std::make_shared<audit::TrailWriter>(container.registration.trail),
                 address = endpoint_text(*original)](const egress::HttpRecord& record) {
                    trail->append(audit::http_json(share->proxy->context().id, audit::wall_now_ns(),
                                                   exchange_of(record, address)));
                },
        };
        std::thread([share, client = std::move(client), connection = std::move(connection)]() mutable {
            share->proxy->serve(std::move(client), connection);
            --share->connections;
        }).detach();
    }
}

} // namespace cerberus::dns
