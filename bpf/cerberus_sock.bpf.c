// SPDX-License-Identifier: GPL-2.0-only
/* The agent policy's network rules where the BPF LSM is not available: cgroup
 * socket programs, loaded once per host and attached (BPF_F_ALLOW_MULTI) to
 * each policed container's cgroup v2 directory, so that they run for every
 * task below it, at any depth, and a nested cgroup cannot detach them. They
 * read the same maps as the LSM programs (cerberus_policy.bpf.c), with the same
 * checks (policy_net.bpf.h), and send the same events. Returning 0 makes the
 * call fail with EPERM. */

#include "policy_common.bpf.h"
#include "policy_net.bpf.h"
#include "sock_owner.bpf.h"
#include "sock_packets.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* The socket's namespace is the container's own (its loopback is its own). */
static __always_inline bool own_netns_of(void *ctx)
{
    __u32 zero = 0;
    struct cerb_config *config = bpf_map_lookup_elem(&cerb_config, &zero);
    return config && bpf_get_netns_cookie(ctx) != config->host_netns_cookie;
}

/* A DNS query of a container whose policy names hosts, in its own network
 * namespace (where the gate listens): sent to the gate whatever address it
 * named, TCP or UDP. Other protocols never get a socket under allowed_hosts
 * (cerb_sock_create). */
static __always_inline bool to_gate(struct bpf_sock_addr *ctx, struct cerb_policy *policy, __u16 port)
{
    return steered_to_gate(policy, port) && own_netns_of(ctx);
}

/* A query with no gate to go to (the gate could not bind the container's
 * port again after a restart, or was never told of it) fails: it must never
 * reach another socket on the loopback. */
static __always_inline int refuse_unserved_query(struct cerb_policy *policy, __u64 cgroup_id, __u16 op,
                                                 __u16 family, const void *addr, int addr_len)
{
    return refuse_address(policy, cgroup_id, op, CERB_RULE_NO_DNS_GATE, family, addr, addr_len, CERB_DNS_PORT)
               ? DENY
               : ALLOW;
}

/* Keeps where the query was sent, for the answer's source (cerb_recvmsg4|6). */
static __always_inline void remember_peer(struct bpf_sock_addr *ctx, const void *addr, int addr_len, __u16 family)
{
    struct cerb_dns_peer peer = {.port = (__u16)ctx->user_port, .family = family};
    if (addr_len == 4)
        __builtin_memcpy(peer.addr, addr, 4);
    else
        __builtin_memcpy(peer.addr, addr, 16);
    __u64 cookie = bpf_get_socket_cookie(ctx);
    bpf_map_update_elem(&cerb_dns_peers, &cookie, &peer, BPF_ANY);
}

/* A destination steered already (a v6 socket's v4-mapped query passes connect6,
 * then connect4 with what connect6 made of it) is not the one the query named. */
static __always_inline void steer4(struct bpf_sock_addr *ctx, __u32 ip, __u16 gate_port)
{
    if (ip != bpf_htonl(CERB_DNS_GATE_IP4))
        remember_peer(ctx, &ip, 4, AF_INET);
    ctx->user_ip4 = bpf_htonl(CERB_DNS_GATE_IP4);
    ctx->user_port = bpf_htons(gate_port);
}

/* IPv4-mapped destinations go to the gate's IPv4 address, others to ::1. */
static __always_inline void steer6(struct bpf_sock_addr *ctx, const __u32 *ip, __u16 gate_port)
{
    if (!is_gate6(ip))
        remember_peer(ctx, ip, 16, AF_INET6);
    bool mapped = is_v4_mapped(ip);
    ctx->user_ip6[0] = 0;
    ctx->user_ip6[1] = 0;
    ctx->user_ip6[2] = mapped ? bpf_htonl(0xffff) : 0;
    ctx->user_ip6[3] = mapped ? bpf_htonl(CERB_DNS_GATE_IP4) : bpf_htonl(1);
    ctx->user_port = bpf_htons(gate_port);
}

/* A socket bound to the loopback device (SO_BINDTODEVICE, SO_BINDTOIFINDEX)
 * has its packets delivered on this host, whatever address they name: in
 * the host's network namespace, to the host's services. */
static __always_inline bool bound_to_host_loopback(struct bpf_sock_addr *ctx, struct cerb_policy *policy)
{
    struct bpf_sock *sk = ctx->sk;
    return sk && sk->bound_dev_if == LOOPBACK_IFINDEX && (policy->flags & CERB_HOST_NETWORK);
}

/* A TCP connect to an address the gate admitted for an allowed_http host, on
 * its port, goes to the egress proxy's listener for the container (on its gate
 * port), where it is judged request by request; where it was going is kept
 * under the socket's cookie for the proxy (cerb_sock_ops). No proxy: refused.
 * v6_socket: the program is connect6 (its context has the IPv6 fields only). */
static __always_inline int steer_to_proxy(struct bpf_sock_addr *ctx, bool v6_socket, struct cerb_policy *policy,
                                          __u64 cgroup_id, __u16 family, const void *addr, int addr_len, __u16 port)
{
    __u16 listener_port = own_gate_port(cgroup_id);
    if (!listener_port)
        return refuse_address(policy, cgroup_id, CERB_OP_CONNECT, CERB_RULE_NO_EGRESS_PROXY, family, addr,
                              addr_len, port)
                   ? DENY
                   : ALLOW;
    struct cerb_proxy_origin origin = {.port = port, .family = family};
    if (addr_len == 4)
        __builtin_memcpy(origin.addr, addr, 4);
    else
        __builtin_memcpy(origin.addr, addr, 16);
    __u64 cookie = bpf_get_socket_cookie(ctx);
    if (bpf_map_update_elem(&cerb_proxy_dials, &cookie, &origin, BPF_ANY))
        return DENY;
    if (!v6_socket) {
        ctx->user_ip4 = bpf_htonl(CERB_EGRESS_PROXY_IP4);
    } else {
        ctx->user_ip6[0] = 0;
        ctx->user_ip6[1] = 0;
        ctx->user_ip6[2] = bpf_htonl(0xffff);
        ctx->user_ip6[3] = bpf_htonl(CERB_EGRESS_PROXY_IP4);
    }
    ctx->user_port = bpf_htons(listener_port);
    return ALLOW;
}

static __always_inline bool tcp_connect_of(struct bpf_sock_addr *ctx, __u16 op)
{
    return op == CERB_OP_CONNECT && ctx->type == SOCK_STREAM_TYPE && ctx->protocol == IPPROTO_TCP;
}

/* The attach type says the family: the family field the caller wrote is not
 * trusted (UDP takes AF_UNSPEC as IPv4). */
static __always_inline int check_inet4(struct bpf_sock_addr *ctx, __u16 op)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = owner_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_HOSTS))
        return ALLOW;
    __u32 ip = ctx->user_ip4;
    __u16 port = bpf_ntohs((__u16)ctx->user_port);
    if (bound_to_host_loopback(ctx, policy) && !loopback4(ip))
        return refuse_address(policy, cgroup_id, op, CERB_RULE_REROUTED, AF_INET, (const __u8 *)&ip, 4, port)
                   ? DENY
                   : ALLOW;
    if (to_gate(ctx, policy, port)) {
        __u16 gate_port = own_gate_port(cgroup_id);
        if (!gate_port)
            return refuse_unserved_query(policy, cgroup_id, op, AF_INET, &ip, 4);
        steer4(ctx, ip, gate_port);
        return ALLOW;
    }
    if (tcp_connect_of(ctx, op)) {
        struct cerb_name_key name = {.cgroup_id = cgroup_id, .addr = {[10] = 0xff, [11] = 0xff}};
        __builtin_memcpy(name.addr + 12, &ip, 4);
        if (name_proxied(&name, port))
            return steer_to_proxy(ctx, false, policy, cgroup_id, AF_INET, &ip, 4, port);
    }
    if (inet4_allowed(cgroup_id, (const __u8 *)&ip, port, own_netns_of(ctx), false))
        return ALLOW;
    return refuse_address(policy, cgroup_id, op, CERB_RULE_NOT_IN_ALLOWED_HOSTS, AF_INET, (const __u8 *)&ip, 4,
                          port)
               ? DENY
               : ALLOW;
}

static __always_inline int check_inet6(struct bpf_sock_addr *ctx, __u16 op)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = owner_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_HOSTS))
        return ALLOW;
    __u32 ip[4] = {ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3]};
    __u16 port = bpf_ntohs((__u16)ctx->user_port);
    if (bound_to_host_loopback(ctx, policy) && !loopback6(ip))
        return refuse_address(policy, cgroup_id, op, CERB_RULE_REROUTED, AF_INET6, (const __u8 *)ip, 16, port)
                   ? DENY
                   : ALLOW;
    if (to_gate(ctx, policy, port)) {
        __u16 gate_port = own_gate_port(cgroup_id);
        if (!gate_port)
            return refuse_unserved_query(policy, cgroup_id, op, AF_INET6, ip, 16);
        steer6(ctx, ip, gate_port);
        return ALLOW;
    }
    if (tcp_connect_of(ctx, op)) {
        struct cerb_name_key name = {.cgroup_id = cgroup_id};
        __builtin_memcpy(name.addr, ip, 16);
        if (name_proxied(&name, port))
            return is_v4_mapped(ip) ? steer_to_proxy(ctx, true, policy, cgroup_id, AF_INET, &ip[3], 4, port)
                                    : steer_to_proxy(ctx, true, policy, cgroup_id, AF_INET6, ip, 16, port);
    }
    if (inet6_allowed(cgroup_id, (const __u8 *)ip, port, own_netns_of(ctx), false))
        return ALLOW;
    return refuse_address(policy, cgroup_id, op, CERB_RULE_NOT_IN_ALLOWED_HOSTS, AF_INET6, (const __u8 *)ip, 16,
                          port)
               ? DENY
               : ALLOW;
}

SEC("cgroup/connect4")
int cerb_connect4(struct bpf_sock_addr *ctx)
{
    return check_inet4(ctx, CERB_OP_CONNECT);
}

SEC("cgroup/connect6")
int cerb_connect6(struct bpf_sock_addr *ctx)
{
    return check_inet6(ctx, CERB_OP_CONNECT);
}

/* Unconnected datagrams: each destination of sendto/sendmsg. */
SEC("cgroup/sendmsg4")
int cerb_sendmsg4(struct bpf_sock_addr *ctx)
{
    return check_inet4(ctx, CERB_OP_SENDMSG);
}

SEC("cgroup/sendmsg6")
int cerb_sendmsg6(struct bpf_sock_addr *ctx)
{
    return check_inet6(ctx, CERB_OP_SENDMSG);
}

/* A connect steer_to_proxy sent to the egress proxy, once its local port is
 * chosen (before its SYN): where it was going, keyed by what the proxy sees
 * of the connection it accepts (its own port, the peer's port). */
SEC("sockops")
int cerb_sock_ops(struct bpf_sock_ops *skops)
{
    if (skops->op != BPF_SOCK_OPS_TCP_CONNECT_CB)
        return 1;
    __u64 cookie = bpf_get_socket_cookie(skops);
    struct cerb_proxy_origin *origin = bpf_map_lookup_elem(&cerb_proxy_dials, &cookie);
    if (!origin)
        return 1;
    struct cerb_proxy_key key = {.listener_port = owner_gate_port(), .client_port = (__u16)skops->local_port};
    bpf_map_update_elem(&cerb_proxy_origins, &key, origin, BPF_ANY);
    bpf_map_delete_elem(&cerb_proxy_dials, &cookie);
    return 1;
}

/* An answer from the gate (to a query steer4|6 sent there) is given the
 * source the query named: resolvers drop answers from another address than
 * the one they asked. Only datagrams from the gate's address and the
 * container's own gate port, on a socket the programs steered, are changed. */
SEC("cgroup/recvmsg4")
int cerb_recvmsg4(struct bpf_sock_addr *ctx)
{
    if (ctx->user_ip4 != bpf_htonl(CERB_DNS_GATE_IP4))
        return ALLOW;
    __u16 gate_port = owner_gate_port();
    if (!gate_port || ctx->user_port != bpf_htons(gate_port))
        return ALLOW;
    __u64 cookie = bpf_get_socket_cookie(ctx);
    struct cerb_dns_peer *peer = bpf_map_lookup_elem(&cerb_dns_peers, &cookie);
    if (!peer || peer->family != AF_INET)
        return ALLOW;
    __u32 ip;
    __builtin_memcpy(&ip, peer->addr, 4);
    ctx->user_ip4 = ip;
    ctx->user_port = peer->port;
    return ALLOW;
}

SEC("cgroup/recvmsg6")
int cerb_recvmsg6(struct bpf_sock_addr *ctx)
{
    __u32 ip[4] = {ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3]};
    if (!is_gate6(ip))
        return ALLOW;
    __u16 gate_port = owner_gate_port();
    if (!gate_port || ctx->user_port != bpf_htons(gate_port))
        return ALLOW;
    __u64 cookie = bpf_get_socket_cookie(ctx);
    struct cerb_dns_peer *peer = bpf_map_lookup_elem(&cerb_dns_peers, &cookie);
    if (!peer)
        return ALLOW;
    if (peer->family == AF_INET6) {
        __builtin_memcpy(ip, peer->addr, 16);
    } else if (peer->family == AF_INET && is_v4_mapped(ip)) { /* a v4-mapped query remembered as IPv4 */
        __builtin_memcpy(&ip[3], peer->addr, 4);
    } else {
        return ALLOW;
    }
    ctx->user_ip6[0] = ip[0];
    ctx->user_ip6[1] = ip[1];
    ctx->user_ip6[2] = ip[2];
    ctx->user_ip6[3] = ip[3];
    ctx->user_port = peer->port;
    return ALLOW;
}

/* Under names, no socket of the container may hold the DNS port: bound there
 * it could answer the gate's upstream queries in the resolver's name (their
 * sockets share the container's network namespace). */
static __always_inline int check_bind(struct bpf_sock_addr *ctx, __u16 family)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = owner_policy(&cgroup_id);
    if (!policy || !steered_to_gate(policy, bpf_ntohs((__u16)ctx->user_port)))
        return ALLOW;
    if (family == AF_INET) {
        __u32 ip = ctx->user_ip4;
        return refuse_address(policy, cgroup_id, CERB_OP_BIND, CERB_RULE_DNS_PORT, AF_INET, (const __u8 *)&ip, 4,
                              CERB_DNS_PORT)
                   ? DENY
                   : ALLOW;
    }
    __u32 ip[4] = {ctx->user_ip6[0], ctx->user_ip6[1], ctx->user_ip6[2], ctx->user_ip6[3]};
    return refuse_address(policy, cgroup_id, CERB_OP_BIND, CERB_RULE_DNS_PORT, AF_INET6, (const __u8 *)ip, 16,
                          CERB_DNS_PORT)
               ? DENY
               : ALLOW;
}

SEC("cgroup/bind4")
int cerb_bind4(struct bpf_sock_addr *ctx)
{
    return check_bind(ctx, AF_INET);
}

SEC("cgroup/bind6")
int cerb_bind6(struct bpf_sock_addr *ctx)
{
    return check_bind(ctx, AF_INET6);
}

/* Raw sockets and ICMP ("ping") sockets pass no address hook on their way
 * out, and protocols other than TCP and UDP name peers their own way
 * (inet_protocol_allowed), so under allowed_hosts they are not created at
 * all. Runs for inet sockets only; other families are refused by the
 * policy's seccomp filter. */
SEC("cgroup/sock_create")
int cerb_sock_create(struct bpf_sock *sk)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = owner_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_HOSTS))
        return ALLOW;
    /* Read once: a field chosen by a condition would be a ctx access at a
     * variable offset, which the verifier refuses. */
    __u32 type = sk->type;
    __u32 protocol = sk->protocol;
    __u16 rule = 0;
    if (type == SOCK_RAW)
        rule = CERB_RULE_RAW_SOCKET;
    else if (type == SOCK_DGRAM && (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6))
        rule = CERB_RULE_PING_SOCKET;
    else if (!inet_protocol_allowed(type, protocol))
        rule = CERB_RULE_PROTOCOL;
    if (!rule)
        return ALLOW;
    struct cerb_event *e = event_start(policy, cgroup_id, CERB_OP_SOCKET, rule, EPERM);
    if (e) {
        e->target_kind = CERB_TARGET_NUMBER;
        e->family = sk->family;
        e->number = rule == CERB_RULE_PROTOCOL ? protocol : type;
        bpf_ringbuf_submit(e, 0);
    }
    return verdict(policy, EPERM) ? DENY : ALLOW;
}

/* Where each packet of the container's sockets really goes, whatever set it
 * up (options, cmsgs, tunnels): the connect and sendmsg programs (or hooks)
 * judged the address the caller named. Packets of the kernel's own sockets
 * and of request sockets (SYN-ACKs) are not the agent's. Returning 0 drops
 * the packet, and the sender's send fails with EPERM. */
SEC("cgroup_skb/egress")
int cerb_egress(struct __sk_buff *skb)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = owner_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_HOSTS))
        return ALLOW;
    struct bpf_sock *sk = skb->sk;
    if (!sk)
        return ALLOW;
    sk = bpf_sk_fullsock(sk);
    if (!sk)
        return ALLOW;
    if (skb->protocol == bpf_htons(ETH_P_IP))
        return check_packet4(skb, sk, policy, cgroup_id);
    if (skb->protocol == bpf_htons(ETH_P_IPV6))
        return check_packet6(skb, sk, policy, cgroup_id);
    return ALLOW;
}
