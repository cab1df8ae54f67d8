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

char LICENSE[] SEC("license") = "GPL";

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

/* The socket's namespace is the container's own (its loopback is its own). */
static __always_inline bool own_netns_of(void *ctx)
{
    __u32 zero = 0;
    struct cerb_config *config = bpf_map_lookup_elem(&cerb_config, &zero);
    return config && bpf_get_netns_cookie(ctx) != config->host_netns_cookie;
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
    if (inet4_allowed(cgroup_id, (const __u8 *)&ip, port, own_netns_of(ctx)))
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
    if (inet6_allowed(cgroup_id, (const __u8 *)ip, port, own_netns_of(ctx)))
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

/* Raw sockets and ICMP ("ping") sockets pass no address hook on their way
 * out, so under allowed_hosts they are not created at all. Runs for inet
 * sockets only; other families are refused by the policy's seccomp filter. */
SEC("cgroup/sock_create")
int cerb_sock_create(struct bpf_sock *sk)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = owner_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_HOSTS))
        return ALLOW;
    __u16 rule = 0;
    if (sk->type == SOCK_RAW)
        rule = CERB_RULE_RAW_SOCKET;
    else if (sk->type == SOCK_DGRAM && (sk->protocol == IPPROTO_ICMP || sk->protocol == IPPROTO_ICMPV6))
        rule = CERB_RULE_PING_SOCKET;
    if (!rule)
        return ALLOW;
    struct cerb_event *e = event_start(policy, cgroup_id, CERB_OP_SOCKET, rule, EPERM);
    if (e) {
        e->target_kind = CERB_TARGET_NUMBER;
        e->family = sk->family;
        e->number = sk->type;
        bpf_ringbuf_submit(e, 0);
    }
    return verdict(policy, EPERM) ? DENY : ALLOW;
}
