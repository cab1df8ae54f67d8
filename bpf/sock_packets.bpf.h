/* SPDX-License-Identifier: GPL-2.0-only */
/* The packet checks of cerb_egress (cerberus_sock.bpf.c): where a packet of
 * the container's sockets really goes, judged from its headers. */

#pragma once

#include "policy_net.bpf.h"
#include "sock_owner.bpf.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPV6_HEADER 40
#define NEXTHDR_HOP 0
#define NEXTHDR_ROUTING 43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_AUTH 51
#define NEXTHDR_DEST 60
#define MAX_EXTENSION_HEADERS 8 /* more than any packet this host builds carries */

/* A packet that does not go where connect and sendmsg were told: reported
 * with the address it was really sent to. */
static __always_inline int refuse_packet(struct cerb_policy *policy, __u64 cgroup_id, __u16 family, const void *addr,
                                         int addr_len, __u16 port)
{
    submit_address(event_reserve(policy, cgroup_id, CERB_OP_PACKET, CERB_RULE_REROUTED, EPERM), family, addr,
                   addr_len, port);
    return verdict(policy, EPERM) ? DENY : ALLOW;
}

/* A packet to the container's own gate port: a query the programs steered. */
static __always_inline bool to_own_gate(struct cerb_policy *policy, __u64 cgroup_id, __u16 port)
{
    return (policy->flags & CERB_HAS_NAMES) && port && port == own_gate_port(cgroup_id);
}

/* The destination port of a TCP or UDP header at offset (0 for others). */
static __always_inline __u16 destination_port(struct __sk_buff *skb, __u32 offset, __u8 protocol)
{
    __u16 port = 0;
    if (protocol != IPPROTO_TCP && protocol != IPPROTO_UDP && protocol != IPPROTO_UDPLITE)
        return 0;
    if (bpf_skb_load_bytes(skb, offset + 2, &port, sizeof(port)) < 0)
        return 0;
    return bpf_ntohs(port);
}

/* A packet leaving through the loopback device is delivered on this host,
 * whatever address it carries (a cmsg or socket option naming the device:
 * IP_PKTINFO, IPV6_PKTINFO, IP_UNICAST_IF, SO_BINDTODEVICE; a route): where
 * the container shares the host's network namespace, only a loopback
 * destination may go that way, judged as any other. */
static __always_inline bool delivered_on_host(struct __sk_buff *skb, struct cerb_policy *policy, bool loopback)
{
    return skb->ifindex == LOOPBACK_IFINDEX && (policy->flags & CERB_HOST_NETWORK) && !loopback;
}

/* IPv4 options (source routes, and any option: none is needed by TCP or UDP),
 * a non-loopback destination reached through the host's loopback device, and
 * a destination that allowed_hosts does not allow unless it is a connected
 * socket's peer (its connect was judged; a connected UDP socket may still
 * sendto others, judged here again). The packet's real destination is judged,
 * whatever the connect and sendmsg programs (or hooks) saw. */
static __always_inline int check_packet4(struct __sk_buff *skb, struct bpf_sock *sk, struct cerb_policy *policy,
                                         __u64 cgroup_id)
{
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) < 0)
        return ALLOW;
    __u16 port = destination_port(skb, ip.ihl * 4, ip.protocol);
    if (ip.ihl > 5 || delivered_on_host(skb, policy, loopback4(ip.daddr)))
        return refuse_packet(policy, cgroup_id, AF_INET, &ip.daddr, 4, port);
    __u32 peer = sk->dst_ip4;
    bool own_netns = !(policy->flags & CERB_HOST_NETWORK);
    /* A query sendmsg4 steered to the gate from a socket connected elsewhere passes too. */
    if ((peer && peer == ip.daddr) || (ip.daddr == bpf_htonl(CERB_DNS_GATE_IP4) && to_own_gate(policy, cgroup_id, port)) ||
        inet4_allowed(cgroup_id, (const __u8 *)&ip.daddr, port, own_netns, false))
        return ALLOW;
    return refuse_packet(policy, cgroup_id, AF_INET, &ip.daddr, 4, port);
}

/* IPv6 routing headers (type 0, 2, segment routing: any), found by walking
 * the extension headers before the payload; then as check_packet4 (an
 * IPv4-mapped destination is IPv4's: the packet is IPv4 by now). */
static __always_inline int check_packet6(struct __sk_buff *skb, struct bpf_sock *sk, struct cerb_policy *policy,
                                         __u64 cgroup_id)
{
    struct ipv6hdr ip;
    if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) < 0)
        return ALLOW;
    __u8 next = ip.nexthdr;
    __u32 offset = IPV6_HEADER;
    for (int i = 0; i < MAX_EXTENSION_HEADERS; i++) {
        if (next == NEXTHDR_ROUTING)
            return refuse_packet(policy, cgroup_id, AF_INET6, &ip.daddr, 16, 0);
        if (next != NEXTHDR_HOP && next != NEXTHDR_DEST && next != NEXTHDR_FRAGMENT && next != NEXTHDR_AUTH)
            break;
        __u8 header[2];
        if (bpf_skb_load_bytes(skb, offset, header, sizeof(header)) < 0)
            return refuse_packet(policy, cgroup_id, AF_INET6, &ip.daddr, 16, 0);
        if (next == NEXTHDR_FRAGMENT)
            offset += 8;
        else if (next == NEXTHDR_AUTH)
            offset += ((__u32)header[1] + 2) * 4;
        else
            offset += ((__u32)header[1] + 1) * 8;
        next = header[0];
    }
    if (next == NEXTHDR_ROUTING || next == NEXTHDR_HOP || next == NEXTHDR_DEST || next == NEXTHDR_FRAGMENT ||
        next == NEXTHDR_AUTH)
        return refuse_packet(policy, cgroup_id, AF_INET6, &ip.daddr, 16, 0); /* deeper than we look */
    __u16 port = destination_port(skb, offset, next);
    __u32 peer[4] = {sk->dst_ip6[0], sk->dst_ip6[1], sk->dst_ip6[2], sk->dst_ip6[3]};
    __u32 daddr[4];
    __builtin_memcpy(daddr, &ip.daddr, 16);
    if (delivered_on_host(skb, policy, loopback6(daddr)))
        return refuse_packet(policy, cgroup_id, AF_INET6, &ip.daddr, 16, port);
    bool to_peer = !all_zero((const __u8 *)peer, 16) && peer[0] == daddr[0] && peer[1] == daddr[1] &&
                   peer[2] == daddr[2] && peer[3] == daddr[3];
    if (to_peer || (is_gate6(daddr) && to_own_gate(policy, cgroup_id, port)) ||
        inet6_allowed(cgroup_id, (const __u8 *)daddr, port, !(policy->flags & CERB_HOST_NETWORK), false))
        return ALLOW;
    return refuse_packet(policy, cgroup_id, AF_INET6, &ip.daddr, 16, port);
}
