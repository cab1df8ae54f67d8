/* SPDX-License-Identifier: GPL-2.0-only */
/* Network rules: destinations of connect and sendmsg. */

#pragma once

#include "policy_common.bpf.h"

#include "policy_paths.bpf.h"

static __always_inline bool ports_allow(const struct cerb_net_value *v, __u16 port)
{
    for (int i = 0; i < CERB_MAX_PORT_RANGES; i++) {
        if (i < v->nranges && port >= v->ranges[i].first && port <= v->ranges[i].last)
            return true;
    }
    return false;
}

/* Loopback is the container's own only in a network namespace of its own. */
static __always_inline bool own_network_namespace(struct socket *sock)
{
    __u32 zero = 0;
    struct cerb_config *config = bpf_map_lookup_elem(&cerb_config, &zero);
    return config && BPF_CORE_READ(sock, sk, __sk_common.skc_net.net, ns.inum) != config->host_netns;
}

static __always_inline bool all_zero(const __u8 *bytes, int n)
{
    for (int i = 0; i < n; i++) {
        if (bytes[i])
            return false;
    }
    return true;
}

/* An address the DNS gate admitted for the container (an answer for an
 * allowed name), still live; key.addr is IPv6 or IPv4-mapped. Expiry is
 * judged here, so enforcement never waits on the gate to delete it. */
static __always_inline bool name_admits(struct cerb_name_key *key, __u16 port, bool proxied_too)
{
    struct cerb_name_value *v = bpf_map_lookup_elem(&cerb_names, key);
    return v && v->expires_ns > bpf_ktime_get_boot_ns() &&
           (ports_allow(&v->ports, port) || (proxied_too && ports_allow(&v->proxied, port)));
}

/* An address the gate admitted for an allowed_http host, on its port: a TCP
 * connect there goes to the egress proxy (cerberus_sock.bpf.c steers it). */
static __always_inline bool name_proxied(struct cerb_name_key *key, __u16 port)
{
    struct cerb_name_value *v = bpf_map_lookup_elem(&cerb_names, key);
    return v && v->expires_ns > bpf_ktime_get_boot_ns() && ports_allow(&v->proxied, port);
}

/* own_netns: the socket is in a network namespace other than the host's.
 * proxied_too: a TCP connect, which the socket programs steer to the egress
 * proxy when the address is admitted for an allowed_http host. */
static __always_inline bool inet4_allowed(__u64 cgroup_id, const __u8 *addr, __u16 port, bool own_netns,
                                          bool proxied_too)
{
    struct cerb_net4_key key = {.prefixlen = 64 + 32, .cgroup_lo = (__u32)cgroup_id, .cgroup_hi = cgroup_id >> 32};
    __builtin_memcpy(key.addr, addr, 4);
    struct cerb_net_value *v = bpf_map_lookup_elem(&cerb_net4, &key);
    if (v && ports_allow(v, port))
        return true;
    if (addr[0] == 127 && own_netns)
        return true;
    struct cerb_name_key name = {.cgroup_id = cgroup_id, .addr = {[10] = 0xff, [11] = 0xff}};
    __builtin_memcpy(name.addr + 12, addr, 4);
    return name_admits(&name, port, proxied_too);
}

static __always_inline bool inet6_allowed(__u64 cgroup_id, const __u8 *addr, __u16 port, bool own_netns,
                                          bool proxied_too)
{
    /* An IPv4-mapped address (::ffff:a.b.c.d) reaches the IPv4 host. */
    if (all_zero(addr, 10) && addr[10] == 0xff && addr[11] == 0xff)
        return inet4_allowed(cgroup_id, addr + 12, port, own_netns, proxied_too);
    struct cerb_net6_key key = {.prefixlen = 64 + 128, .cgroup_lo = (__u32)cgroup_id, .cgroup_hi = cgroup_id >> 32};
    __builtin_memcpy(key.addr, addr, 16);
    struct cerb_net_value *v = bpf_map_lookup_elem(&cerb_net6, &key);
    if (v && ports_allow(v, port))
        return true;
    if (all_zero(addr, 15) && addr[15] == 1 && own_netns)
        return true;
    struct cerb_name_key name = {.cgroup_id = cgroup_id};
    __builtin_memcpy(name.addr, addr, 16);
    return name_admits(&name, port, proxied_too);
}

/* A DNS query of a container whose policy names hosts: the cgroup socket
 * programs steer it to the DNS gate (cerberus_sock.bpf.c), which answers only
 * for allowed names, so the destination it named is not judged. */
static __always_inline bool steered_to_gate(struct cerb_policy *policy, __u16 port)
{
    return (policy->flags & CERB_HAS_NAMES) && port == CERB_DNS_PORT;
}

/* Sends e (when there is one) naming the address; addr_len 4, 16 or 0 (none). */
static __always_inline void submit_address(struct cerb_event *e, __u16 family, const __u8 *addr, int addr_len,
                                           __u16 port)
{
    if (!e)
        return;
    e->target_kind = CERB_TARGET_ADDRESS;
    e->family = family;
    e->port = port;
    if (addr_len == 4)
        __builtin_memcpy(e->addr, addr, 4);
    else if (addr_len == 16)
        __builtin_memcpy(e->addr, addr, 16);
    bpf_ringbuf_submit(e, 0);
}

static __always_inline int refuse_address(struct cerb_policy *policy, __u64 cgroup_id, __u16 op, __u16 rule,
                                          __u16 family, const __u8 *addr, int addr_len, __u16 port)
{
    submit_address(event_start(policy, cgroup_id, op, rule, EPERM), family, addr, addr_len, port);
    return verdict(policy, EPERM);
}

#define SOCK_STREAM_TYPE 1
#define SOCK_DGRAM_TYPE 2
#define SOL_IP 0
#define SOL_IPV6 41
#define IP_OPTIONS 4
#define IP_RETOPTS 7
#define IPV6_2292RTHDR 5
#define IPV6_2292PKTOPTIONS 6
#define IPV6_RTHDR 57

/* Under allowed_hosts an inet socket may only be TCP or UDP (UDP-Lite sends
 * through udp_sendmsg, so the same hooks see it): SCTP, MPTCP, DCCP, L2TP
 * and the others name further peers their own way (connectx, bindx, announced
 * subflow addresses) that no address hook sees. protocol is the resolved one
 * (cgroup sock_create) or the caller's (socket_create, where 0 picks the
 * type's first protocol: TCP for streams, UDP for datagrams). */
static __always_inline bool inet_protocol_allowed(int type, int protocol)
{
    if (type == SOCK_STREAM_TYPE)
        return protocol == 0 || protocol == IPPROTO_TCP;
    if (type == SOCK_DGRAM_TYPE)
        return protocol == 0 || protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE;
    return false;
}

/* Socket options that send packets elsewhere than to the address the connect
 * and sendmsg checks saw: IPv4 source routes, IPv6 routing headers (type 0,
 * 2 and segment routing alike), and the RFC 2292 option that sets them all
 * at once. Their cmsg forms are dropped by the cgroup egress program. */
static __always_inline bool option_reroutes(int level, int optname)
{
    if (level == SOL_IP)
        return optname == IP_OPTIONS || optname == IP_RETOPTS;
    if (level == SOL_IPV6)
        return optname == IPV6_RTHDR || optname == IPV6_2292RTHDR || optname == IPV6_2292PKTOPTIONS;
    return false;
}

/* The family the kernel reads an inet socket's destination as, whatever the
 * caller wrote (Linux 6.1): connect with AF_UNSPEC disconnects; IPv4
 * datagram sends (udp_sendmsg, raw_sendmsg, l2tp) take AF_UNSPEC as AF_INET;
 * IPv6 UDP takes it as "the connected peer" and IPv6 raw as AF_INET6; TCP
 * ignores the address of a send. Other families are refused by the kernel. */
static __always_inline __u16 destination_family(struct socket *sock, __u16 family, __u16 op)
{
    __u16 sock_family = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
    if (family != AF_UNSPEC || op != CERB_OP_SENDMSG || (sock_family != AF_INET && sock_family != AF_INET6))
        return family;
    __u16 type = BPF_CORE_READ(sock, sk, sk_type);
    __u16 protocol = BPF_CORE_READ(sock, sk, sk_protocol);
    if (type == SOCK_STREAM_TYPE)
        return AF_UNSPEC;
    if (sock_family == AF_INET6 && (protocol == IPPROTO_UDP || protocol == IPPROTO_UDPLITE))
        return AF_UNSPEC;
    return sock_family;
}

/* A connect of a TCP socket: the one kind of call the socket programs steer
 * to the egress proxy, so the one the proxy's addresses admit here. */
static __always_inline bool tcp_connect(struct socket *sock, __u16 op)
{
    return op == CERB_OP_CONNECT && BPF_CORE_READ(sock, sk, sk_type) == SOCK_STREAM_TYPE &&
           BPF_CORE_READ(sock, sk, sk_protocol) == IPPROTO_TCP;
}

/* A destination of connect or sendmsg; address is a kernel copy. */
static __always_inline int check_destination(struct cerb_policy *policy, __u64 cgroup_id, struct socket *sock,
                                             void *address, int addrlen, __u16 op)
{
    __u16 family = 0;
    if (bpf_probe_read_kernel(&family, sizeof(family), address) < 0)
        return 0;
    family = destination_family(sock, family, op);

    if (family == AF_INET && (policy->flags & CERB_HAS_HOSTS)) {
        struct sockaddr_in sin = {};
        if (addrlen < (int)sizeof(sin) || bpf_probe_read_kernel(&sin, sizeof(sin), address) < 0)
            return 0; /* the kernel rejects it as EINVAL */
        __u16 port = bpf_ntohs(sin.sin_port);
        if (steered_to_gate(policy, port) ||
            inet4_allowed(cgroup_id, (const __u8 *)&sin.sin_addr, port, own_network_namespace(sock),
                          tcp_connect(sock, op)))
            return 0;
        return refuse_address(policy, cgroup_id, op, CERB_RULE_NOT_IN_ALLOWED_HOSTS, family,
                              (const __u8 *)&sin.sin_addr, 4, port);
    }
    if (family == AF_INET6 && (policy->flags & CERB_HAS_HOSTS)) {
        struct sockaddr_in6 sin6 = {};
        if (addrlen < 24 || bpf_probe_read_kernel(&sin6, sizeof(sin6), address) < 0)
            return 0; /* SIN6_LEN_RFC2133 is the kernel's minimum */
        __u16 port = bpf_ntohs(sin6.sin6_port);
        if (steered_to_gate(policy, port) ||
            inet6_allowed(cgroup_id, (const __u8 *)&sin6.sin6_addr, port, own_network_namespace(sock),
                          tcp_connect(sock, op)))
            return 0;
        return refuse_address(policy, cgroup_id, op, CERB_RULE_NOT_IN_ALLOWED_HOSTS, family,
                              (const __u8 *)&sin6.sin6_addr, 16, port);
    }
    if (family == AF_UNIX && (policy->flags & (CERB_HAS_PATHS | CERB_HAS_DENIED))) {
        struct scratch *s = get_scratch();
        if (!s)
            return 0;
        long size = bpf_probe_read_kernel_str(s->path, UNIX_PATH_MAX,
                                              (const char *)address + offsetof(struct sockaddr_un, sun_path));
        if (size <= 1)
            return 0; /* abstract or unnamed: not a path */
        if (s->path[0] != '/')
            return refuse_path(policy, cgroup_id, op, CERB_RULE_PATH_UNRESOLVED, EPERM, 0, 0);
        return check_path(s, policy, cgroup_id, size, true, op, EPERM);
    }
    if ((policy->flags & CERB_HAS_HOSTS) && family != AF_INET && family != AF_INET6 && family != AF_UNIX &&
        family != AF_UNSPEC && family != AF_NETLINK)
        return refuse_address(policy, cgroup_id, op, CERB_RULE_ADDRESS_FAMILY, family, NULL, 0, 0);
    return 0;
}

/* The socket a unix connect or send reaches, by the path it was bound to: the
 * kernel follows symlinks and ".." in sun_path after socket_connect has seen
 * it, so the typed path alone can be steered outside allowed_paths. Abstract
 * and unnamed sockets have no path and are left to the other rules. */
static __always_inline int check_unix_peer(struct sock *peer, int ret)
{
    __u64 cgroup_id;
    if (ret || !peer)
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy || !(policy->flags & (CERB_HAS_PATHS | CERB_HAS_DENIED)))
        return 0;
    struct unix_sock *peer_unix = (struct unix_sock *)peer;
    struct dentry *dentry = BPF_CORE_READ(peer_unix, path.dentry);
    if (!dentry)
        return 0;
    struct scratch *s = get_scratch();
    if (!s)
        return 0;
    struct vfsmount *mnt = BPF_CORE_READ(peer_unix, path.mnt);
    long size = build_path(s, dentry, mnt, NULL);
    return check_mounted_path(s, policy, cgroup_id, mnt, size, true, CERB_OP_CONNECT, EPERM);
}
