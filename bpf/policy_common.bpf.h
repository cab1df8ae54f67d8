/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared by the agent policy programs: maps, policy lookup, events. The
 * shared maps are pinned by name (libbpf reuses a pinned map of the same
 * layout), so the LSM and the socket programs read and write the same ones. */

#pragma once

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "cerberus_policy.h"

/* Where the hooks attach. cmake/bpf.cmake builds this source twice: as BPF LSM
 * programs (lsm/<hook>), and with CERB_FMOD_RET as fmod_ret programs on the
 * security_ function that calls the LSM hook (fmod_ret/security_<...>), for
 * kernels that have BPF trampolines but not the BPF LSM in their active list.
 * fmod_ret runs before the function's body: a non-zero return skips it, and
 * every LSM with it; 0 lets it run, so an allow must return 0, as here. A hook
 * with no return value attaches as fentry there (it never denies). The bodies
 * are the same in both; where the plumbing differs the source says so. */
#ifdef CERB_FMOD_RET
#define CERB_HOOK(hook, function) SEC("fmod_ret/" #function)
#define CERB_VOID_HOOK(hook, function) SEC("fentry/" #function)
#define CERB_THIS_BACKEND CERB_BACKEND_FMOD_RET
#else
#define CERB_HOOK(hook, function) SEC("lsm/" #hook)
#define CERB_VOID_HOOK(hook, function) SEC("lsm/" #hook)
#ifndef CERB_THIS_BACKEND /* the call observer (cerberus_observe.bpf.c) sets its own */
#define CERB_THIS_BACKEND CERB_BACKEND_BPF_LSM
#endif
#endif

#define EPERM 1
#define EACCES 13
#define ENOSPC 28
#define AF_UNSPEC 0
#define AF_UNIX 1
#define AF_INET 2
#define AF_INET6 10
#define AF_NETLINK 16
#define AF_PACKET 17
#define SOCK_RAW 3
#define SOCK_PACKET 10
#define SOCK_TYPE_MASK 0xf
#define FMODE_WRITE 0x2
#define FMODE_EXEC 0x20 /* also __FMODE_EXEC in f_flags, the flag open_exec passes */
#define O_TRUNC 01000
#define PROT_READ 0x1
#define PROT_EXEC 0x4
#define VM_EXEC 0x4
#define CAP_OPT_NOAUDIT 0x2
#define PTRACE_MODE_NOAUDIT 0x04
#define TS_COMPAT 0x0002 /* thread_info.status: in an i386 system call */
#define I386_NR_OFFSET 0x10000 /* added by syscall_argument to an i386 system call's number */
#define NR_KEYCTL 250 /* x86-64 */
#define NR_I386_KEYCTL 288
#define UNIX_PATH_MAX 108
#define MAX_DEPTH 32 /* path components build_path follows; a power of two */
#define NAME_BUF 256 /* NAME_MAX + 1 */
#define DELETED_SUFFIX " (deleted)" /* what d_path appends to an unlinked file */
#define MNT_NOEXEC 0x04
/* struct mount.mnt_ns of mounts in no namespace (fs/mount.h: ERR_PTR(-EINVAL)) */
#define MNT_NS_INTERNAL ((struct mnt_namespace *)-22)
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#define SB_I_NOEXEC 0x02
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* Every program's return held to 0 or -errno where the verifier sees it: from
 * Linux 6.12 the verifier refuses an LSM program whose return it cannot bound
 * to [-MAX_ERRNO, 0], and the compiler may carry a verdict in a register that
 * held other values before the exit (6.12 refused cerb_file_open so). A value
 * outside refuses. BPF_PROG's shape, with that bound at the exit. */
#define CERB_MAX_ERRNO 4095
static __always_inline int errno_or_zero(int verdict)
{
    /* Compared and returned in the one register: clang otherwise compares a
     * sign-extended copy and returns the original, whose bounds the verifier
     * does not learn from the copy's. */
    long bounded = verdict;
    asm volatile("" : "+r"(bounded));
    if (bounded < -CERB_MAX_ERRNO || bounded > 0)
        bounded = -EPERM;
    return bounded;
}

/* Pointer argument n (from 0) of the hook as a number, and whether it is
 * NULL, for a hook the kernel may call with one. The verifier takes a BPF LSM program's pointer
 * arguments for trusted, and Linux 6.12's takes a trusted pointer for never
 * NULL: a test of the argument itself is judged always one way and what it
 * guards dropped as dead code (6.12 so let every signal through task_kill,
 * whose cred is NULL but for USB async I/O). Read from the context with a
 * probe read, the value is a number the verifier makes no guess about (and
 * may be kept as a map key, as a pointer may not be); the fmod_ret
 * programs' arguments are untrusted, and read the same. */
static __always_inline __u64 hook_arg_value(unsigned long long *ctx, int n)
{
    __u64 value = 0;
    bpf_probe_read_kernel(&value, sizeof(value), &ctx[n]);
    return value;
}

static __always_inline bool hook_arg_null(unsigned long long *ctx, int n)
{
    return !hook_arg_value(ctx, n);
}

#define CERB_PROG(name, args...)                                                                                  \
    name(unsigned long long *ctx);                                                                                \
    static __always_inline int ____##name(unsigned long long *ctx, ##args);                                       \
    int name(unsigned long long *ctx)                                                                             \
    {                                                                                                             \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wint-conversion\"") int verdict =        \
            ____##name(___bpf_ctx_cast(args));                                                                    \
        _Pragma("GCC diagnostic pop") return errno_or_zero(verdict);                                              \
    }                                                                                                             \
    static __always_inline int ____##name(unsigned long long *ctx, ##args)

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_CONTAINERS);
    __type(key, __u64);
    __type(value, struct cerb_policy);
} CERB_MAP_POLICIES SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_NET_RULES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct cerb_net4_key);
    __type(value, struct cerb_net_value);
} CERB_MAP_NET4 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LPM_TRIE);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_NET_RULES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct cerb_net6_key);
    __type(value, struct cerb_net_value);
} CERB_MAP_NET6 SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_PATH_RULES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct cerb_path_key);
    __type(value, struct cerb_path_value);
} CERB_MAP_PATHS SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct cerb_config);
} CERB_MAP_CONFIG SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_CONTAINERS);
    __type(key, __u64);
    __type(value, struct cerb_event_acct);
} CERB_MAP_EVENT_ACCT SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_EVENTS_BYTES);
} CERB_MAP_EVENTS SEC(".maps");

/* Written by the DNS gate, read by every program (inet4_allowed). */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_NAME_ADDRESSES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct cerb_name_key);
    __type(value, struct cerb_name_value);
} CERB_MAP_NAMES SEC(".maps");

/* Written by the DNS gate, read by the socket programs. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_CONTAINERS);
    __type(key, __u64);
    __type(value, struct cerb_dns_gate);
} CERB_MAP_DNS_GATES SEC(".maps");

/* Written and read by the socket programs only: an LRU, so that sockets
 * closed with a query in flight never fill it. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_DNS_PEERS);
    __type(key, __u64);
    __type(value, struct cerb_dns_peer);
} CERB_MAP_DNS_PEERS SEC(".maps");

/* Written by the socket programs; CERB_MAP_PROXY_ORIGINS read (and emptied)
 * by the egress proxy. LRUs: a connect that never reaches the proxy leaves
 * its entry to be pushed out. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_PROXY_DIALS);
    __type(key, __u64);
    __type(value, struct cerb_proxy_origin);
} CERB_MAP_PROXY_DIALS SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(max_entries, CERB_MAX_PROXY_DIALS);
    __type(key, struct cerb_proxy_key);
    __type(value, struct cerb_proxy_origin);
} CERB_MAP_PROXY_ORIGINS SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(pinning, LIBBPF_PIN_BY_NAME);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct cerb_setup_task);
} CERB_MAP_SETUP_TASKS SEC(".maps");

/* A path walk's state (policy_paths.bpf.h's walk_path): what it has hashed and
 * what the rules it met said. */
struct path_walk {
    __u64 cgroup_id;
    __u64 hash; /* of the bytes before pos */
    __u64 lengths; /* cerb_policy.path_lengths: the prefix lengths that have entries */
    __u32 pos; /* the next byte to hash */
    __u32 deny_len; /* length + 1 of the denied_paths entry that matched */
    __u32 allow_len; /* length of the longest allowed/read-only prefix */
    __u32 allow_kinds; /* its kinds */
    __u32 exact_kinds; /* kinds of an entry for the whole path */
    __u32 dot_component; /* a "." or ".." component was seen */
};

/* bpf_d_path output, and the walk over it. Per CPU: programs are not
 * preempted under the VM lane's (Debian default) voluntary preemption. */
struct scratch {
    char path[CERB_PATH_MAX];
    struct path_walk walk;
    __u64 components[MAX_DEPTH]; /* build_path's dentries, deepest first */
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct scratch);
} cerb_scratch SEC(".maps");

struct policy_search {
    int level; /* the current task's cgroup level, where the search starts */
    __u64 cgroup_id; /* the nearest ancestor with a policy of this backend; 0: none */
    int found_level; /* its level */
};

static long search_level(__u32 i, void *ctx)
{
    struct policy_search *search = ctx;
    int level = search->level - 1 - (int)i; /* the task's own level is find_policy_at's */
    if (level < 1)
        return 1;
    __u64 id = bpf_get_current_ancestor_cgroup_id(level);
    struct cerb_policy *policy = bpf_map_lookup_elem(&cerb_policies, &id);
    /* Another backend's container: its own programs enforce it. */
    if (!policy || (policy->flags & CERB_BACKEND_MASK) != CERB_THIS_BACKEND)
        return 0;
    search->cgroup_id = id;
    search->found_level = level;
    return 1;
}

/* The policy of the task's cgroup or of its nearest ancestor that has one,
 * however deep below the container the task has moved itself (a writable
 * cgroupfs lets it nest as deep as it likes), and that cgroup's level. */
static __always_inline struct cerb_policy *find_policy_at(__u64 *cgroup_id, int *level)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    struct policy_search search = {.level = BPF_CORE_READ(task, cgroups, dfl_cgrp, level)};
    if (search.level < 1)
        return NULL;
    /* The task's own cgroup first, outside the loop: an agent's task is most
     * often in the container's cgroup itself, and its policy is then found by
     * one lookup. */
    __u64 own = bpf_get_current_cgroup_id();
    struct cerb_policy *policy = bpf_map_lookup_elem(&cerb_policies, &own);
    if (policy && (policy->flags & CERB_BACKEND_MASK) == CERB_THIS_BACKEND) {
        *cgroup_id = own;
        *level = search.level;
        return policy;
    }
    bpf_loop(search.level - 1, search_level, &search, 0);
    if (!search.cgroup_id)
        return NULL;
    *cgroup_id = search.cgroup_id;
    *level = search.found_level;
    return bpf_map_lookup_elem(&cerb_policies, &search.cgroup_id);
}

static __always_inline struct cerb_policy *find_policy(__u64 *cgroup_id)
{
    int level;
    return find_policy_at(cgroup_id, &level);
}

/* True when task is in the container whose policy cgroup (cgroup_id, at
 * level) the caller's was found at: its own cgroup is that one or below it.
 * A cgroup's ancestors are an array indexed by level (from Linux 6.0). */
static __always_inline bool task_in_container(struct task_struct *task, __u64 cgroup_id, int level)
{
    struct cgroup *cgrp = BPF_CORE_READ(task, cgroups, dfl_cgrp);
    if (!cgrp || level < 1 || BPF_CORE_READ(cgrp, level) < level)
        return false;
    struct cgroup *ancestor = NULL;
    bpf_probe_read_kernel(&ancestor, sizeof(ancestor),
                          (void *)cgrp + bpf_core_field_offset(struct cgroup, ancestors) + level * sizeof(ancestor));
    return ancestor && BPF_CORE_READ(ancestor, kn, id) == cgroup_id;
}

/* True when the current task is judged as the agent under policy: the
 * container runs its own program (CERB_ARMED), and the task is not the
 * runtime's, still setting up a process it will exec in the container. */
static __always_inline bool judged_as_agent(struct cerb_policy *policy, __u64 cgroup_id)
{
    if (!(policy->flags & CERB_ARMED))
        return false;
    struct cerb_setup_task *setup = bpf_task_storage_get(&cerb_setup_tasks, bpf_get_current_task_btf(), 0, 0);
    return !setup || setup->cgroup_id != cgroup_id;
}

/* The policy, when it judges the current task as the agent. */
static __always_inline struct cerb_policy *find_armed_policy(__u64 *cgroup_id)
{
    struct cerb_policy *policy = find_policy(cgroup_id);
    return policy && judged_as_agent(policy, *cgroup_id) ? policy : NULL;
}

static __always_inline struct cerb_policy *find_armed_policy_at(__u64 *cgroup_id, int *level)
{
    struct cerb_policy *policy = find_policy_at(cgroup_id, level);
    return policy && judged_as_agent(policy, *cgroup_id) ? policy : NULL;
}

static __always_inline struct scratch *get_scratch(void)
{
    __u32 zero = 0;
    return bpf_map_lookup_elem(&cerb_scratch, &zero);
}

/* Room for one record of size bytes in the ring buffer, counted against the
 * container's share: NULL (and one more lost event counted) when the
 * container already holds its share of unread events or the ring buffer is
 * full. */
static __always_inline void *share_reserve(struct cerb_policy *policy, __u64 cgroup_id, __u64 size)
{
    struct cerb_event_acct *acct = bpf_map_lookup_elem(&cerb_event_acct, &cgroup_id);
    __u32 unread = policy->events_sent - (acct ? acct->consumed : 0);
    void *record = NULL;
    if (unread < CERB_EVENTS_PER_CONTAINER)
        record = bpf_ringbuf_reserve(&cerb_events, size, 0);
    if (!record) {
        __sync_fetch_and_add(&policy->events_lost, 1);
        return NULL;
    }
    __sync_fetch_and_add(&policy->events_sent, 1);
    return record;
}

/* Starts an event with the fields every operation shares, but not the
 * task's: programs that run outside the sender's context (cgroup egress)
 * cannot ask for them. NULL when share_reserve finds no room. */
static __always_inline struct cerb_event *event_reserve(struct cerb_policy *policy, __u64 cgroup_id, __u16 op,
                                                        __u16 rule, int err)
{
    struct cerb_event *e = share_reserve(policy, cgroup_id, sizeof(*e));
    if (!e)
        return NULL;
    __builtin_memset(e, 0, sizeof(*e));
    e->time_ns = bpf_ktime_get_boot_ns();
    e->cgroup_id = cgroup_id;
    e->op = op;
    e->rule = rule;
    e->err = err;
    e->verdict = (policy->flags & CERB_ENFORCE) ? CERB_VERDICT_DENIED : CERB_VERDICT_AUDIT;
    return e;
}

/* event_reserve with the current task's ids and name. */
static __always_inline struct cerb_event *event_start(struct cerb_policy *policy, __u64 cgroup_id, __u16 op,
                                                      __u16 rule, int err)
{
    struct cerb_event *e = event_reserve(policy, cgroup_id, op, rule, err);
    if (!e)
        return NULL;
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u64 uid_gid = bpf_get_current_uid_gid();
    e->pid = pid_tgid >> 32;
    e->tid = (__u32)pid_tgid;
    e->uid = (__u32)uid_gid;
    e->gid = uid_gid >> 32;
    bpf_get_current_comm(e->comm, sizeof(e->comm));
    return e;
}

static __always_inline int verdict(struct cerb_policy *policy, int err)
{
    return (policy->flags & CERB_ENFORCE) ? -err : 0;
}

/* Reports and decides an operation whose target is a number (or nothing). */
static __always_inline int refuse(struct cerb_policy *policy, __u64 cgroup_id, __u16 op, __u16 rule, int err,
                                  __u8 target_kind, __u32 number)
{
    struct cerb_event *e = event_start(policy, cgroup_id, op, rule, err);
    if (e) {
        e->target_kind = target_kind;
        e->number = number;
        bpf_ringbuf_submit(e, 0);
    }
    return verdict(policy, err);
}
