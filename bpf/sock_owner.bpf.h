/* SPDX-License-Identifier: GPL-2.0-only */
/* What the cgroup socket programs (cerberus_sock.bpf.c) share: whose container
 * a program runs for, its gate port, and the loopback and gate addresses. */

#pragma once

#include "policy_common.bpf.h"

#define SOCK_DGRAM 2
#define IPPROTO_ICMP 1
#define IPPROTO_ICMPV6 58
#define ALLOW 1
#define DENY 0

/* Whose container a program runs for: the policy's cgroup id, written by the
 * runtime into the storage of each attachment (one per container cgroup,
 * shared by the attach types) right after attaching, before any task is in
 * the cgroup. */
struct {
    __uint(type, BPF_MAP_TYPE_CGROUP_STORAGE);
    __type(key, __u64);
    __type(value, __u64);
} cerb_sock_owner SEC(".maps");

static __always_inline struct cerb_policy *owner_policy(__u64 *cgroup_id)
{
    __u64 *owner = bpf_get_local_storage(&cerb_sock_owner, 0);
    if (!*owner)
        return NULL;
    *cgroup_id = *owner;
    return bpf_map_lookup_elem(&cerb_policies, cgroup_id);
}

/* The port of the gate's sockets for this container (host byte order); 0
 * when the gate does not serve it. Never another container's: the entry is
 * keyed by the container's own cgroup id. */
static __always_inline __u16 own_gate_port(__u64 cgroup_id)
{
    struct cerb_dns_gate *gate = bpf_map_lookup_elem(&cerb_dns_gates, &cgroup_id);
    return gate ? gate->port : 0;
}

/* The gate port of the container a recvmsg program runs for. */
static __always_inline __u16 owner_gate_port(void)
{
    __u64 *owner = bpf_get_local_storage(&cerb_sock_owner, 0);
    return *owner ? own_gate_port(*owner) : 0;
}

static __always_inline bool is_v4_mapped(const __u32 *ip)
{
    return ip[0] == 0 && ip[1] == 0 && ip[2] == bpf_htonl(0xffff);
}

/* The gate's IPv6 addresses: ::1 and ::ffff:127.53.0.1. */
static __always_inline bool is_gate6(const __u32 *ip)
{
    return ip[0] == 0 && ip[1] == 0 &&
           ((ip[2] == 0 && ip[3] == bpf_htonl(1)) || (is_v4_mapped(ip) && ip[3] == bpf_htonl(CERB_DNS_GATE_IP4)));
}

#define LOOPBACK_IFINDEX 1 /* the loopback device, in every network namespace */

static __always_inline bool loopback4(__u32 ip)
{
    return (bpf_ntohl(ip) >> 24) == 127;
}

static __always_inline bool loopback6(const __u32 *ip)
{
    return (ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] == bpf_htonl(1)) ||
           (is_v4_mapped(ip) && loopback4(ip[3]));
}
