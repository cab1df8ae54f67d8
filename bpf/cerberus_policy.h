/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/* The contract between the BPF programs (the policy programs in
 * cerberus_policy.bpf.c, built as BPF LSM and as fmod_ret programs, and the
 * cgroup socket programs in cerberus_sock.bpf.c) and the runtime: the pinned
 * maps' names, keys and values, and the
 * ring-buffer event. Fixed-width fields with explicit padding only; the
 * runtime static_asserts every size in one place (kernel/pinned_maps.hpp) and
 * opens every pinned map there, refusing one whose key or value size differs
 * (another cerberus version pinned it). */
#ifndef CERBERUS_POLICY_H
#define CERBERUS_POLICY_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Each build pins under CERB_PIN_ROOT/<layout id> (a hash of bpf/, made by
 * cmake/layout.cmake; CERB_PIN_DIR in kernel/pinned_maps.hpp), never beside
 * another build's programs and maps. Builds from before the layout id pinned
 * directly in CERB_PIN_ROOT. */
#define CERB_PIN_ROOT "/sys/fs/bpf/cerberus"

/* The maps every program object shares, pinned by name under the pin dir.
 * Each name is written once, here: the BPF sources declare the maps with
 * these macros and the runtime turns them into strings (CERB_NAME). */
#define CERB_MAP_POLICIES cerb_policies
#define CERB_MAP_NET4 cerb_net4
#define CERB_MAP_NET6 cerb_net6
#define CERB_MAP_PATHS cerb_paths
#define CERB_MAP_CONFIG cerb_config
#define CERB_MAP_EVENT_ACCT cerb_event_acct
#define CERB_MAP_EVENTS cerb_events
#define CERB_MAP_SETUP_TASKS cerb_setup_tasks
#define CERB_MAP_NAMES cerb_names
#define CERB_MAP_DNS_PEERS cerb_dns_peers
#define CERB_MAP_DNS_GATES cerb_dns_gates
#define CERB_MAP_PROXY_DIALS cerb_proxy_dials
#define CERB_MAP_PROXY_ORIGINS cerb_proxy_origins
/* Pinned by the runtime under that name: the socket programs' per-cgroup owner
 * storage (cerb_sock_owner in cerberus_sock.bpf.c), key and value a cgroup id. */
#define CERB_PIN_SOCK_OWNER "sock_owner"
#define CERB_NAME_(x) #x
#define CERB_NAME(x) CERB_NAME_(x)

/* Capacity: 1,000 containers with tens of rules each, with room to spare. */
#define CERB_MAX_CONTAINERS 16384
#define CERB_MAX_NET_RULES 65536
#define CERB_MAX_PATH_RULES 131072
/* The ring buffer holds a little over five containers' shares. A share is what the collector's drain
 * thread must take in time: about 7 ms of the fastest denials measured natively (2.3 million a second). */
#define CERB_EVENTS_BYTES (32 * 1024 * 1024)
#define CERB_EVENTS_PER_CONTAINER 16384 /* unread events one container may hold: about 5.6 MB */

#define CERB_PATH_MAX 4096 /* scratch buffer for bpf_d_path; a power of two */
#define CERB_EVENT_PATH 256 /* bytes of the path kept in an event */
#define CERB_MAX_PORT_RANGES 8
#define CERB_MAX_NAME_ADDRESSES 65536 /* addresses the DNS gate has admitted, every container together */
#define CERB_MAX_DNS_PEERS 65536 /* sockets with a DNS query in flight */
#define CERB_MAX_PROXY_DIALS 65536 /* connections steered to the egress proxy, not yet accepted */
#define CERB_MAX_OWNED_FILES 262144 /* open files whose owner (F_SETOWN) a policed agent set, every container together */

/* struct cerb_policy.flags */
#define CERB_ENFORCE (1u << 0) /* else audit: allow and report */
#define CERB_HAS_HOSTS (1u << 1) /* allowed_hosts present: network is allow-listed */
#define CERB_HAS_PATHS (1u << 2) /* allowed_paths or read_only_paths present */
#define CERB_HAS_DENIED (1u << 3) /* denied_paths present */
#define CERB_HAS_BINS (1u << 4) /* allowed_bins present */
/* Set by the programs (never by the compiler) when the container's first
 * program is exec'd. Before that only the runtime's own init runs in the
 * cgroup, setting the container up, and only its exec is checked. */
#define CERB_ARMED (1u << 5)
/* Which backend enforces the entry (set by the runtime at install): the BPF
 * LSM programs, the fmod_ret ones and the landlock backend's socket programs
 * can be attached on one host at once, sharing these maps, and the policy
 * programs leave every other backend's containers alone. */
#define CERB_BACKEND_MASK (3u << 6)
#define CERB_BACKEND_BPF_LSM (0u << 6)
#define CERB_BACKEND_FMOD_RET (1u << 6)
#define CERB_BACKEND_LANDLOCK (2u << 6)
/* allowed_hosts names hosts: the container's DNS goes to the DNS gate, which
 * admits the addresses of the answers for allowed names in CERB_MAP_NAMES. */
#define CERB_HAS_NAMES (1u << 8)
/* The container shares the host's network namespace (set by the runtime from
 * the spec): what its packets reach through the loopback device, whatever
 * address they carry, is the host's own services. */
#define CERB_HOST_NETWORK (1u << 9)
/* (1u << 10) is free: it marked, at create, a container whose Landlock denials the kernel audit log
 * carried; whether it does is now seen per denial, by the collector (docs/audit.md). */
/* The container shares a pid namespace (the host's, or another container's):
 * processes outside it have numbers the agent can name. */
#define CERB_SHARED_PIDS (1u << 11)

/* Where the cgroup socket programs send every DNS query (TCP or UDP to port
 * CERB_DNS_PORT, to any address) of a container with CERB_HAS_NAMES: the DNS
 * gate's sockets for that container in its own network namespace, on the
 * port CERB_MAP_DNS_GATES records for it. IPv4 and IPv4-mapped destinations
 * go to CERB_DNS_GATE_IP4 (127.53.0.1), IPv6 ones to ::1. */
#define CERB_DNS_PORT 53
#define CERB_DNS_GATE_IP4 0x7f350001 /* host byte order */
/* Where they send a TCP connect to an address the gate admitted for an
 * allowed_http host, on that host's port: the egress proxy's listener for the
 * container, in its network namespace, on the container's gate port (IPv6
 * sockets to its IPv4-mapped form). */
#define CERB_EGRESS_PROXY_IP4 0x7f350002 /* host byte order */

/* CERB_MAP_SETUP_TASKS: task storage, written by the runtime through a pidfd.
 * A task marked there is the runtime's own in a container: the init at
 * create, or `cerberus exec`'s process entering it. Until it execs the
 * container's program it is judged as if the policy were not armed yet (only
 * its exec is checked), and no task of a policed container may trace it.
 * The kernel drops the mark when the task execs or exits. */
struct cerb_setup_task {
    __u64 cgroup_id; /* the container it enters: the mark counts only there */
};

/* CERB_MAP_POLICIES: cgroup id -> what applies to that container. */
struct cerb_policy {
    __u32 flags;
    __u32 events_sent; /* events put in the ring buffer; wraps, only differences count */
    __u64 forbidden_caps; /* bit n = capability n */
    __u64 events_lost; /* bumped by the programs when the ring buffer is full or the container's share is */
    __u64 path_lengths; /* the lengths of the container's CERB_MAP_PATHS keys, as cerb_path_length_bit */
};

/* A path key's length as a bit of cerb_policy.path_lengths: bit n for length
 * n, bit 63 for every length from 63 on. A path's walk looks up only the
 * prefixes whose length has its bit set: the others have no entry. */
static inline __u64 cerb_path_length_bit(__u32 len)
{
    return 1ULL << (len < 63 ? len : 63);
}

/* CERB_MAP_EVENT_ACCT: cgroup id -> what the audit collector has taken from
 * the ring buffer. Written only by the collector; the programs read consumed
 * so that one container never holds more than CERB_EVENTS_PER_CONTAINER
 * unread events, and a noisy container cannot starve the others. */
struct cerb_event_acct {
    __u32 consumed; /* compared with cerb_policy.events_sent, modulo 2^32 */
    __u32 pad;
    __u64 lost_reported; /* events_lost already written to the trail */
};

/* CERB_MAP_NET4 / CERB_MAP_NET6: LPM tries. prefixlen counts the 64 bits of
 * the cgroup id plus the CIDR's prefix, so each container owns a subtree. */
struct cerb_net4_key {
    __u32 prefixlen;
    __u32 cgroup_lo;
    __u32 cgroup_hi;
    __u8 addr[4];
};

struct cerb_net6_key {
    __u32 prefixlen;
    __u32 cgroup_lo;
    __u32 cgroup_hi;
    __u8 addr[16];
};

struct cerb_port_range {
    __u16 first; /* host byte order, inclusive */
    __u16 last;
};

/* Ports allowed for one CIDR. The compiler folds the ports of every shorter
 * CIDR covering this one into it, because the trie only returns the longest. */
struct cerb_net_value {
    __u32 nranges;
    struct cerb_port_range ranges[CERB_MAX_PORT_RANGES];
};

/* CERB_MAP_NAMES: a hash, written only by the DNS gate: an address an
 * answer for an allowed name carried, admitted for the container until
 * expires_ns with the ports of the names that led to it. IPv4 addresses are
 * kept IPv4-mapped (::ffff:a.b.c.d). */
struct cerb_name_key {
    __u64 cgroup_id;
    __u8 addr[16];
};

struct cerb_name_value {
    __u64 expires_ns; /* bpf_ktime_get_boot_ns; the programs ignore the entry from then on */
    struct cerb_net_value ports; /* reached directly (allowed_hosts names) */
    struct cerb_net_value proxied; /* TCP connects steered to the egress proxy (allowed_http hosts) */
};

/* CERB_MAP_DNS_GATES: a hash, written only by the DNS gate: cgroup id -> the
 * port its sockets for that container are bound to, on both gate addresses,
 * TCP and UDP. Containers sharing a network namespace (a pod's) each have
 * their own, so each query reaches the gate on the socket of its sender's
 * policy. A container with names and no entry has no gate: its queries are
 * refused. */
struct cerb_dns_gate {
    __u16 port; /* host byte order */
    __u16 pad;
    __u32 pad2;
};

/* CERB_MAP_PROXY_DIALS: an LRU hash, socket cookie -> where a connect steered
 * to the egress proxy was going (the connect programs write it). At the
 * connect's start (sock_ops, the local port chosen) it moves to
 * CERB_MAP_PROXY_ORIGINS, keyed by what the proxy sees of the accepted
 * connection, which takes it out. */
struct cerb_proxy_origin {
    __u8 addr[16]; /* IPv4 in the first 4 bytes when family is AF_INET */
    __u16 port; /* host byte order */
    __u16 family;
    __u32 pad;
};

struct cerb_proxy_key {
    __u16 listener_port; /* the container's gate port, host byte order */
    __u16 client_port; /* the connecting socket's local port, host byte order */
    __u32 pad;
};

/* CERB_MAP_DNS_PEERS: an LRU hash, socket cookie -> where the socket's last
 * DNS query was sent before the socket programs steered it to the gate; the
 * recvmsg programs give that back as the answer's source, because resolvers
 * drop an answer from another address than the one they asked. */
struct cerb_dns_peer {
    __u8 addr[16]; /* IPv4 in the first 4 bytes when family is AF_INET */
    __u16 port; /* network byte order, as the socket programs see it */
    __u16 family;
    __u32 pad;
};

/* CERB_MAP_PATHS: one entry per path rule. The hash is FNV-1a over the path
 * bytes (no trailing '/'; the root is the empty string), seeded with the
 * per-host seed in CERB_MAP_CONFIG, so that colliding paths cannot be
 * prepared in advance. */
struct cerb_path_key {
    __u64 cgroup_id;
    __u64 hash;
    __u32 len;
    __u32 pad;
};

/* struct cerb_path_value.kinds */
#define CERB_PATH_ALLOW (1u << 0) /* allowed_paths: read and write below it */
#define CERB_PATH_READ_ONLY (1u << 1) /* read_only_paths: read below it */
#define CERB_PATH_DENY (1u << 2) /* denied_paths: nothing below it */
#define CERB_PATH_BIN (1u << 3) /* allowed_bins: this exact file may be exec'd */
/* A directory above an entry of any kind: its name, like an entry's, may not
 * be renamed, linked or removed while a rule is keyed on the path through it. */
#define CERB_PATH_ABOVE (1u << 4)

struct cerb_path_value {
    __u32 kinds;
    __u32 pad;
};

/* CERB_MAP_CONFIG: a one-entry array, written once by whoever creates the maps. */
struct cerb_config {
    __u64 path_seed;
    __u64 host_netns_cookie; /* the same namespace's cookie, for the socket programs */
    __u32 host_netns; /* inode of the host's network namespace (of /proc/1/ns/net) */
    __u32 pad;
};

/* Event operations. */
enum cerb_op {
    CERB_OP_CONNECT = 1,
    CERB_OP_SENDMSG = 2,
    CERB_OP_SOCKET = 3,
    CERB_OP_OPEN = 4,
    CERB_OP_EXEC = 5,
    CERB_OP_MMAP_EXEC = 6,
    CERB_OP_CAPABILITY = 7,
    CERB_OP_BPF = 8,
    CERB_OP_PERF_EVENT = 9,
    CERB_OP_MODULE = 10, /* module request or load */
    CERB_OP_KEXEC = 11,
    CERB_OP_USERNS = 12,
    CERB_OP_MOUNT = 13, /* mount, move_mount, umount, pivot_root */
    CERB_OP_LINK = 14,
    CERB_OP_RENAME = 15,
    CERB_OP_UNLINK = 16, /* unlink, rmdir */
    CERB_OP_CREATE = 17, /* mkdir, mknod, symlink */
    CERB_OP_SETATTR = 18, /* truncate, chmod, chown, times */
    CERB_OP_PTRACE = 19, /* of the runtime's set-up task (cerb_setup_tasks), or of a process outside the container */
    CERB_OP_PACKET = 20, /* an outgoing packet, seen by the cgroup egress program */
    CERB_OP_SETSOCKOPT = 21, /* number: level << 16 | optname */
    CERB_OP_XATTR = 22, /* setxattr, removexattr (POSIX ACLs too) */
    CERB_OP_CHROOT = 23,
    CERB_OP_BIND = 24,
    CERB_OP_IOCTL = 25, /* a device ioctl (Landlock's ioctl_dev right) */
    CERB_OP_IO_URING = 26, /* io_uring_setup */
    CERB_OP_MEMFD = 27, /* memfd_create */
    CERB_OP_SIGNAL = 28, /* number: the target's pid */
    CERB_OP_TASK = 29, /* priority, scheduling, memory placement or limits of another process; number: its pid */
    CERB_OP_KEYRING = 30, /* number: the key's serial */
    CERB_OP_USERFAULTFD = 31,
};

/* Which rule decided. */
enum cerb_rule {
    CERB_RULE_NOT_IN_ALLOWED_HOSTS = 1,
    CERB_RULE_ADDRESS_FAMILY = 2, /* family other than inet, inet6, unix, netlink */
    CERB_RULE_RAW_SOCKET = 3,
    CERB_RULE_NOT_IN_ALLOWED_PATHS = 4,
    CERB_RULE_DENIED_PATH = 5, /* rule_len: length of the denied_paths entry */
    CERB_RULE_READ_ONLY_PATH = 6, /* rule_len: length of the read_only_paths entry */
    CERB_RULE_NOT_IN_ALLOWED_BINS = 7,
    CERB_RULE_EXEC_MAPPING = 8, /* PROT_EXEC mapping of a file not in allowed_bins or read_only_paths */
    CERB_RULE_FORBIDDEN_CAP = 9,
    CERB_RULE_ESCALATION = 10, /* bpf, perf, modules, kexec, userns, mount */
    CERB_RULE_PATH_UNRESOLVED = 11, /* too long or deep for the buffers, or a relative unix socket path */
    CERB_RULE_PING_SOCKET = 12, /* ICMP datagram socket: its destinations pass no cgroup socket program */
    CERB_RULE_REROUTED = 13, /* IP options, a routing header, or a destination other than the one checked */
    CERB_RULE_PROTOCOL = 14, /* inet protocol other than TCP and UDP: it names peers its own way */
    CERB_RULE_DETACHED_MOUNT = 15, /* a file on a mount outside the task's mount namespace (open_tree, fsmount) */
    CERB_RULE_RULE_NAME = 16, /* renaming, linking or removing a rule's path or a directory above it */
    CERB_RULE_DNS_PORT = 17, /* binding the DNS port under names: the socket could answer the gate's upstream queries */
    /* The landlock backend's seccomp refusals, where Landlock has no right to grant (the call observer's records) */
    CERB_RULE_XATTR = 18, /* xattrs and ACLs, set or removed, under path rules */
    CERB_RULE_IO_URING = 19, /* io_uring, whose operations pass no seccomp check */
    CERB_RULE_MEMFD = 20, /* memfds under allowed_bins, where vm.memfd_noexec cannot keep them from running */
    CERB_RULE_OUTSIDE_CONTAINER = 21, /* a process outside the container, or the host's keyrings */
    CERB_RULE_OWNER_UNREMEMBERED = 22, /* a file's owner set when every container's owned files fill the map */
    CERB_RULE_NO_DNS_GATE = 23, /* a DNS query under names while the gate has no socket for the container */
    CERB_RULE_NO_EGRESS_PROXY = 24, /* a connect to an allowed_http host while the proxy does not serve the container */
};

#define CERB_VERDICT_DENIED 1
#define CERB_VERDICT_AUDIT 2

/* struct cerb_event.target_kind */
#define CERB_TARGET_NONE 0
#define CERB_TARGET_ADDRESS 1 /* family, port, addr */
#define CERB_TARGET_PATH 2 /* path */
#define CERB_TARGET_CAPABILITY 3 /* number */
#define CERB_TARGET_NUMBER 4 /* number: socket type, bpf cmd, read/load id */

/* struct cerb_event.number of an open (CERB_OP_OPEN): what it asked for. */
#define CERB_ACCESS_WRITE (1u << 0) /* else read only */

/* One denial (or, in audit mode, would-be denial), sent on CERB_MAP_EVENTS. */
struct cerb_event {
    __u64 time_ns; /* bpf_ktime_get_boot_ns: CLOCK_BOOTTIME */
    __u64 cgroup_id;
    __u32 pid; /* thread group id, as seen from the host */
    __u32 tid;
    __u32 uid;
    __u32 gid;
    char comm[16];
    __u16 op; /* enum cerb_op */
    __u8 verdict; /* CERB_VERDICT_* */
    __u8 target_kind;
    __s32 err; /* errno returned (or that would be, in audit mode), positive */
    __u16 rule; /* enum cerb_rule */
    __u16 family; /* AF_INET, AF_INET6, AF_UNIX... for addresses and sockets */
    __u16 port; /* host byte order */
    __u16 rule_len;
    __u32 number; /* capability, socket type, bpf command... */
    __u32 path_len; /* bytes of path used, without the NUL */
    __u8 addr[16];
    char path[CERB_EVENT_PATH];
};

/* The landlock backend's call observer (cerberus_observe.bpf.c): a system
 * call of a policed container that failed as a refusal of its policy would
 * (EACCES, EPERM, EROFS, EXDEV, EBUSY), taken at its return with what it
 * named, for the collector to judge against the container's policy. Sent on
 * CERB_MAP_EVENTS beside struct cerb_event and counted in the same share;
 * the collector tells the two apart by size. */
#define CERB_CALL_NAME 256
struct cerb_call_name {
    char dir[CERB_CALL_NAME]; /* where a relative path starts (the cwd or the directory fd), or the file an
                                 fd-only call names; as the task sees it; "" for an absolute path */
    char path[CERB_CALL_NAME]; /* the path argument as passed; "" when the call names an fd only */
};
/* struct cerb_call_event.flags */
#define CERB_CALL_TRUNCATED (1u << 0) /* a name did not fit, or its directory could not be built */
#define CERB_CALL_CAPABILITY (1u << 1) /* the call failed a check of the forbidden capability cap */
struct cerb_call_event {
    __u64 time_ns; /* bpf_ktime_get_boot_ns */
    __u64 cgroup_id;
    __u32 pid;
    __u32 tid;
    __u32 uid;
    __u32 gid;
    char comm[16];
    __u64 args[6];
    __u32 nr; /* x86-64 system call number (bpf/cerberus_calls.h) */
    __s32 err; /* positive errno it returned */
    __u32 flags; /* CERB_CALL_* */
    __u32 cap;
    struct cerb_call_name names[2];
};
#endif
