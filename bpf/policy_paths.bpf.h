/* SPDX-License-Identifier: GPL-2.0-only */
/* Path rules: matching a path against a container's entries, and building
 * the path of a dentry where bpf_d_path is not allowed. */

#pragma once

#include "policy_common.bpf.h"

/* Bytes hashed in one bpf_loop iteration: an iteration (a callback call and
 * a scratch lookup) per byte, then per component, made a policed open pay for
 * each (docs/benchmarks.md). */
#define WALK_CHUNK 32

/* Whether the component ending before byte i is "." or "..". Read back from
 * the buffer rather than carried across iterations. */
static __always_inline bool dot_component_ends_at(const struct scratch *s, __u32 i)
{
    char last = i >= 1 ? s->path[(i - 1) & (CERB_PATH_MAX - 1)] : 0;
    char before = i >= 2 ? s->path[(i - 2) & (CERB_PATH_MAX - 1)] : 0;
    char third = i >= 3 ? s->path[(i - 3) & (CERB_PATH_MAX - 1)] : 0;
    return last == '.' && (before == '/' || (before == '.' && third == '/'));
}

/* The walk's next step, on the state in the scratch buffer: the next
 * WALK_CHUNK bytes from pos, and at each component boundary among them the
 * prefix before it against the rules (looked up only at a length some key of
 * the container has). 1 to stop the walk. Not inlined, its state in a map: a
 * global function is verified once, and the bpf_loop callback that calls it
 * carries nothing the verifiers from 6.8 on must see converge (the chunk's
 * exits inlined there, with the walk in the callback's context, passed 6.12's
 * and 7.2's million instructions). A boundary does not end the step: a step
 * costs a scratch lookup, and most paths fit in one or two. */
__noinline int walk_step(void)
{
    struct scratch *s = get_scratch();
    if (!s)
        return 1;
    struct path_walk *w = &s->walk;
    __u32 i = w->pos;
    __u64 hash = w->hash;
    for (__u32 j = 0; j < WALK_CHUNK; j++, i++) {
        char c = s->path[i & (CERB_PATH_MAX - 1)];
        if (c != '/' && c != 0) {
            hash = (hash ^ (__u8)c) * FNV_PRIME;
            continue;
        }
        if (dot_component_ends_at(s, i))
            w->dot_component = 1;
        if (w->lengths & cerb_path_length_bit(i)) {
            struct cerb_path_key key = {.cgroup_id = w->cgroup_id, .hash = hash, .len = i};
            struct cerb_path_value *rule = bpf_map_lookup_elem(&cerb_paths, &key);
            if (rule) {
                if (rule->kinds & CERB_PATH_DENY) {
                    w->deny_len = i + 1;
                    return 1;
                }
                if (rule->kinds & (CERB_PATH_ALLOW | CERB_PATH_READ_ONLY)) {
                    w->allow_kinds = rule->kinds & (CERB_PATH_ALLOW | CERB_PATH_READ_ONLY);
                    w->allow_len = i;
                }
                if (c == 0)
                    w->exact_kinds = rule->kinds;
            }
        }
        if (c == 0)
            return 1;
        hash = (hash ^ (__u8)c) * FNV_PRIME;
    }
    w->hash = hash;
    w->pos = i;
    return 0;
}

/* The verifier knows nothing of a global function's result, and a bpf_loop
 * callback must return 0 or 1: walk_step's are. */
static long walk_chunk(__u32 iteration, void *ctx)
{
    return walk_step() & 1;
}

/* Matches the NUL-terminated path in the scratch buffer s (length with the
 * NUL in size) against the container's path rules: the walk's outcome, in s,
 * or NULL when the path could not be walked. Every step moves on by one byte
 * at least, so size of them reach the NUL. */
static __always_inline struct path_walk *walk_path(struct scratch *s, struct cerb_policy *policy, __u64 cgroup_id,
                                                   long size)
{
    __u32 zero = 0;
    struct cerb_config *config = bpf_map_lookup_elem(&cerb_config, &zero);
    if (!config || size <= 0 || size > CERB_PATH_MAX)
        return NULL;
    __builtin_memset(&s->walk, 0, sizeof(s->walk));
    s->walk.cgroup_id = cgroup_id;
    s->walk.lengths = policy->path_lengths;
    s->walk.hash = FNV_OFFSET ^ config->path_seed;
    bpf_loop(size, walk_chunk, NULL, 0);
    return &s->walk;
}

static __always_inline int refuse_path(struct cerb_policy *policy, __u64 cgroup_id, __u16 op, __u16 rule, int err,
                                       __u32 rule_len, __u32 number)
{
    struct cerb_event *e = event_start(policy, cgroup_id, op, rule, err);
    if (e) {
        struct scratch *s = get_scratch();
        e->target_kind = CERB_TARGET_PATH;
        e->rule_len = rule_len;
        e->number = number;
        if (s) {
            long n = bpf_probe_read_kernel_str(e->path, sizeof(e->path), s->path);
            e->path_len = n > 0 ? n - 1 : 0;
        }
        bpf_ringbuf_submit(e, 0);
    }
    return verdict(policy, err);
}

/* The path rules for an open (or a unix socket connect, want_write set) of
 * the path in the scratch buffer s (size with the NUL): the rule the access
 * breaks (0: none), and in *rule_len the length of the entry that decided. A
 * directory opened to list it is a read like any other: the names below a path
 * the policy does not let the agent read are not the agent's to see. */
static __always_inline __u16 path_refusal(struct scratch *s, struct cerb_policy *policy, __u64 cgroup_id, long size,
                                          bool want_write, __u32 *rule_len)
{
    *rule_len = 0;
    struct path_walk *w = walk_path(s, policy, cgroup_id, size);
    if (!w || w->dot_component)
        return CERB_RULE_PATH_UNRESOLVED;
    if (w->deny_len) {
        *rule_len = w->deny_len - 1;
        return CERB_RULE_DENIED_PATH;
    }
    if (!(policy->flags & CERB_HAS_PATHS))
        return 0;
    if (!w->allow_kinds)
        return CERB_RULE_NOT_IN_ALLOWED_PATHS;
    if (want_write && !(w->allow_kinds & CERB_PATH_ALLOW)) {
        *rule_len = w->allow_len;
        return CERB_RULE_READ_ONLY_PATH;
    }
    return 0;
}

/* path_refusal, the refusal recorded: 0, or the verdict. */
static __always_inline int check_path(struct scratch *s, struct cerb_policy *policy, __u64 cgroup_id, long size,
                                      bool want_write, __u16 op, int err)
{
    __u32 rule_len;
    __u16 rule = path_refusal(s, policy, cgroup_id, size, want_write, &rule_len);
    return rule ? refuse_path(policy, cgroup_id, op, rule, err, rule_len, want_write ? CERB_ACCESS_WRITE : 0) : 0;
}

/* The mount namespace of a mount, read once where both kernel_internal and
 * mount_detached want it. */
static __always_inline struct mnt_namespace *mount_ns(struct vfsmount *vfsmnt)
{
    return BPF_CORE_READ(container_of(vfsmnt, struct mount, mnt), mnt_ns);
}

/* Whether a mount in namespace ns is outside the current task's mount
 * namespace: a detached copy of a tree (open_tree OPEN_TREE_CLONE, fsmount)
 * or a tree unmounted lazily, where a path starts at the detached root and
 * names nothing the rules name. The kernel's own internal mounts (pipes,
 * sockets, memfds) are in no namespace's tree and have no path to judge. The
 * task's namespace is read through its BTF pointers, loads rather than probe
 * reads (helper calls). */
static __always_inline bool ns_detached(struct mnt_namespace *ns)
{
    struct task_struct *task = bpf_get_current_task_btf();
    return (__u64)ns != (__u64)task->nsproxy->mnt_ns && ns != MNT_NS_INTERNAL;
}

static __always_inline bool mount_detached(struct vfsmount *vfsmnt)
{
    return ns_detached(mount_ns(vfsmnt));
}

/* check_path for a file or name in the mount vfsmnt. */
static __always_inline int check_mounted_path(struct scratch *s, struct cerb_policy *policy, __u64 cgroup_id,
                                              struct vfsmount *vfsmnt, long size, bool want_write, __u16 op, int err)
{
    if (mount_detached(vfsmnt))
        return refuse_path(policy, cgroup_id, op, CERB_RULE_DETACHED_MOUNT, err, 0, want_write ? CERB_ACCESS_WRITE : 0);
    return check_path(s, policy, cgroup_id, size, want_write, op, err);
}

struct path_build {
    __u64 dentry; /* struct dentry *, where the walk up is */
    __u64 vfsmnt; /* struct vfsmount *, its mount */
    __u64 mnt; /* struct mount *, the same */
    __u64 root_dentry; /* the task's root */
    long pos; /* bytes written on the way down */
    __u32 n; /* dentries collected in scratch.components */
    __u32 reached_root;
    __u32 failed;
    __u32 pad;
};

/* One step towards the root: collect the dentry, or cross to the parent mount. */
static long build_up(__u32 i, void *ctx)
{
    struct path_build *b = ctx;
    struct scratch *s = get_scratch();
    if (!s) {
        b->failed = 1;
        return 1;
    }
    struct dentry *dentry = (struct dentry *)b->dentry;
    struct vfsmount *vfsmnt = (struct vfsmount *)b->vfsmnt;
    struct mount *mnt = (struct mount *)b->mnt;
    /* The root's dentry in any mount: a unix socket's bound path is in the
     * binder's mounts, and the container root is a bind mount of its rootfs. */
    if (b->dentry == b->root_dentry) {
        b->reached_root = 1;
        return 1;
    }
    if (dentry == BPF_CORE_READ(vfsmnt, mnt_root)) {
        struct mount *parent = BPF_CORE_READ(mnt, mnt_parent);
        if (parent == mnt) { /* a namespace's root above: outside the task's root */
            b->failed = 1;
            return 1;
        }
        b->dentry = (__u64)BPF_CORE_READ(mnt, mnt_mountpoint);
        b->mnt = (__u64)parent;
        b->vfsmnt = (__u64)&parent->mnt;
        return 0;
    }
    if (b->n >= MAX_DEPTH) {
        b->failed = 1;
        return 1;
    }
    s->components[b->n & (MAX_DEPTH - 1)] = b->dentry;
    b->n++;
    b->dentry = (__u64)BPF_CORE_READ(dentry, d_parent);
    return 0;
}

/* One component on the way down: "/<name>". */
static long build_down(__u32 k, void *ctx)
{
    struct path_build *b = ctx;
    struct scratch *s = get_scratch();
    if (!s || k >= b->n)
        return 1;
    struct dentry *component = (struct dentry *)s->components[(b->n - 1 - k) & (MAX_DEPTH - 1)];
    long pos = b->pos;
    if (pos < 0 || pos > CERB_PATH_MAX - NAME_BUF - 2) {
        b->failed = 1;
        return 1;
    }
    s->path[pos++] = '/';
    long len = bpf_probe_read_kernel_str(&s->path[pos], NAME_BUF, BPF_CORE_READ(component, d_name.name));
    if (len <= 1) {
        b->failed = 1;
        return 1;
    }
    b->pos = pos + len - 1;
    return 0;
}

/* Writes the path of dentry (in mount vfsmnt), as the current task sees it,
 * then "/<last>" when last is set, into the scratch buffer. bpf_d_path is not
 * allowed in the path hooks, so this walks dentries and mounts like d_path.
 * Returns the size with the NUL, or -1 when deeper or longer than the buffers
 * or outside the task's root (a name its rules cannot judge). */
static __always_inline long build_path(struct scratch *s, struct dentry *dentry, struct vfsmount *vfsmnt,
                                       struct dentry *last)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    struct path_build b;
    __builtin_memset(&b, 0, sizeof(b));
    b.dentry = (__u64)dentry;
    b.vfsmnt = (__u64)vfsmnt;
    b.mnt = (__u64)container_of(vfsmnt, struct mount, mnt);
    b.root_dentry = (__u64)BPF_CORE_READ(task, fs, root.dentry);
    s->path[0] = 0; /* an unresolved path's event names nothing, not the last one */
    if (last) {
        s->components[0] = (__u64)last;
        b.n = 1;
    }
    bpf_loop(2 * MAX_DEPTH, build_up, &b, 0); /* components and mount crossings */
    if (!b.reached_root || b.failed)
        return -1;
    bpf_loop(MAX_DEPTH, build_down, &b, 0);
    long pos = b.pos;
    if (b.failed || pos < 0 || pos > CERB_PATH_MAX - 2)
        return -1;
    if (b.n == 0)
        s->path[pos++] = '/';
    s->path[pos] = 0;
    return pos + 1;
}

/* The path of file, as the current task sees it, into the scratch buffer by
 * walking its dentries and mounts; an unlinked file gets " (deleted)", as
 * from d_path, so that it never matches an exact rule. The size with the
 * NUL, or < 0. */
static __always_inline long walked_file_path(struct scratch *s, struct file *file)
{
    struct dentry *dentry = BPF_CORE_READ(file, f_path.dentry);
    long size = build_path(s, dentry, BPF_CORE_READ(file, f_path.mnt), NULL);
    bool unlinked = !BPF_CORE_READ(dentry, d_hash.pprev) && BPF_CORE_READ(dentry, d_parent) != dentry;
    if (size <= 0 || !unlinked)
        return size;
    long pos = size - 1;
    if (pos < 0 || pos > CERB_PATH_MAX - sizeof(DELETED_SUFFIX))
        return -1;
    __builtin_memcpy(&s->path[pos], DELETED_SUFFIX, sizeof(DELETED_SUFFIX));
    return pos + sizeof(DELETED_SUFFIX);
}

/* The path of a file about to run, or to be mapped executable, into the
 * scratch buffer; the size with the NUL, or < 0. bpf_d_path is allowed in those
 * LSM hooks, but on security_ functions only in security_file_open among ours
 * (the kernel's allow-list), so fmod_ret walks the dentries instead. */
static __always_inline long exec_file_path(struct scratch *s, struct file *file)
{
#ifdef CERB_FMOD_RET
    return walked_file_path(s, file);
#else
    return bpf_d_path(&file->f_path, s->path, sizeof(s->path));
#endif
}

/* A name a rule is keyed on (an entry, or a directory above one) keeps naming
 * the object it named at start: it may not be renamed, linked or removed, as
 * the old name or as the new one, or another object would take the rule (and
 * the object its new name). The path is in the scratch buffer. */
static __always_inline int check_rule_name(struct scratch *s, struct cerb_policy *policy, __u64 cgroup_id, long size,
                                           __u16 op)
{
    struct path_walk *w = walk_path(s, policy, cgroup_id, size);
    if (!w)
        return refuse_path(policy, cgroup_id, op, CERB_RULE_PATH_UNRESOLVED, EACCES, 0, CERB_ACCESS_WRITE);
    /* Names below a denied entry are check_path's: the walk stops at the entry. */
    if (!w->exact_kinds && w->deny_len != size)
        return 0;
    return refuse_path(policy, cgroup_id, op, CERB_RULE_RULE_NAME, EACCES, 0, CERB_ACCESS_WRITE);
}

/* The policy, when it judges the current task as the agent and has path rules. */
static __always_inline struct cerb_policy *find_path_policy(__u64 *cgroup_id)
{
    struct cerb_policy *policy = find_armed_policy(cgroup_id);
    return policy && (policy->flags & (CERB_HAS_PATHS | CERB_HAS_DENIED)) ? policy : NULL;
}

/* The path rules for a change to the name parent/last in mount mnt (or to
 * parent itself when last is 0): a write, allowed only under allowed_paths
 * and never under denied_paths. A change that moves or removes the name
 * (rename, link, unlink, rmdir) must also leave the names rules are keyed on
 * alone, binary rules among them. A mnt of 0 is a mount not known: refused.
 * Not inlined: a global function is verified once, whoever calls it, and
 * link and rename judge two names. Verifiers from Linux 6.8 on explore each
 * bpf_loop callback until its states converge; with the walk inlined twice,
 * 7.2's passed its limit of a million instructions on path_link (E2BIG). Its
 * arguments are kernel pointers as numbers, since the walk reads through them
 * with CO-RE probe reads only. 0, or non-zero to deny (check_change_at). */
__noinline int judge_change(__u64 parent, __u64 mnt, __u64 last, __u32 op, __u32 moves_name)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    __u32 judged = CERB_HAS_PATHS | CERB_HAS_DENIED | (moves_name ? CERB_HAS_BINS : 0);
    if (!policy || !(policy->flags & judged))
        return 0;
    struct scratch *s = get_scratch();
    if (!s)
        return 0;
    if (mnt && mount_detached((struct vfsmount *)mnt))
        return refuse_path(policy, cgroup_id, op, CERB_RULE_DETACHED_MOUNT, EACCES, 0, CERB_ACCESS_WRITE);
    s->path[0] = 0;
    long size = mnt ? build_path(s, (struct dentry *)parent, (struct vfsmount *)mnt, (struct dentry *)last) : -1;
    if (policy->flags & (CERB_HAS_PATHS | CERB_HAS_DENIED)) {
        int ret = check_path(s, policy, cgroup_id, size, true, op, EACCES);
        if (ret)
            return ret;
    }
    return moves_name ? check_rule_name(s, policy, cgroup_id, size, op) : 0;
}

/* A kernel pointer as a plain number: what the verifier knows of a hook's
 * arguments (a typed pointer) cannot be passed to a global function. */
static __always_inline __u64 as_number(const void *pointer)
{
    __u64 number = 0;
    bpf_probe_read_kernel(&number, sizeof(number), &pointer);
    return number;
}

/* judge_change after an earlier program's verdict ret. The verifier knows
 * nothing of a global function's result, and newer kernels hold an LSM
 * program's to an errno: any denial is EACCES, as judge_change's are. */
static __always_inline int check_change_at(struct dentry *parent, struct vfsmount *mnt, struct dentry *last,
                                           __u16 op, bool moves_name, int ret)
{
    if (ret)
        return ret;
    return judge_change(as_number(parent), as_number(mnt), as_number(last), op, moves_name) ? -EACCES : 0;
}

/* check_change_at for a name in the directory dir (or dir itself). */
static __always_inline int check_change(const struct path *dir, struct dentry *last, __u16 op, bool moves_name,
                                        int ret)
{
    return check_change_at(BPF_CORE_READ(dir, dentry), BPF_CORE_READ(dir, mnt), last, op, moves_name, ret);
}
