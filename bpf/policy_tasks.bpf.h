/* SPDX-License-Identifier: GPL-2.0-only */
/* Processes outside the container out of the agent's reach (ptrace's
 * checks, signals, priority, scheduling, memory placement, limits), the
 * host's keyrings and userfaultfd. Programs, included where they stand in the
 * order of bpf_hooks.cpp. */

#pragma once

/* A task no policed agent may reach through ptrace's checks (tracing it,
 * /proc/<pid>/mem, process_vm_writev, pidfd_getfd, /proc/<pid>/root...): the
 * runtime's set-up task (cerb_setup_tasks), whose rights must not become the
 * agent's, from any task of a policed container; and, from the agent, any
 * task outside its container, whatever namespaces and capabilities the
 * config gives it. Probes the kernel makes quietly (ps reading /proc/<pid>/stat)
 * are refused unreported. */
CERB_HOOK(ptrace_access_check, security_ptrace_access_check)
int CERB_PROG(cerb_ptrace_access_check, struct task_struct *child, unsigned int mode, int ret)
{
    __u64 cgroup_id;
    int level;
    if (ret)
        return ret;
    struct cerb_policy *policy = find_policy_at(&cgroup_id, &level);
    if (!policy)
        return 0;
    __u32 target = BPF_CORE_READ(child, tgid);
    if (bpf_task_storage_get(&cerb_setup_tasks, child, 0, 0))
        return refuse(policy, cgroup_id, CERB_OP_PTRACE, CERB_RULE_ESCALATION, EPERM, CERB_TARGET_NUMBER, target);
    if (!judged_as_agent(policy, cgroup_id) || task_in_container(child, cgroup_id, level))
        return 0;
    if (mode & PTRACE_MODE_NOAUDIT)
        return verdict(policy, EPERM);
    return refuse(policy, cgroup_id, CERB_OP_PTRACE, CERB_RULE_OUTSIDE_CONTAINER, EPERM, CERB_TARGET_NUMBER, target);
}

/* An act of the agent on another task (a signal, its priority, scheduling or
 * memory placement): only on tasks of its own container. */
static __always_inline int judge_task_act(struct task_struct *target, __u16 op, int ret)
{
    __u64 cgroup_id;
    int level;
    if (ret)
        return ret;
    struct cerb_policy *policy = find_armed_policy_at(&cgroup_id, &level);
    if (!policy || task_in_container(target, cgroup_id, level))
        return 0;
    return refuse(policy, cgroup_id, op, CERB_RULE_OUTSIDE_CONTAINER, EPERM, CERB_TARGET_NUMBER,
                  BPF_CORE_READ(target, tgid));
}

/* Every signal a task sends (kill, tgkill, pidfd_send_signal, kill(-1)); cred
 * is set when the kernel sends one on another's behalf (USB async I/O), and
 * tested through hook_arg_null (6.12's verifier takes it for never NULL). */
CERB_HOOK(task_kill, security_task_kill)
int CERB_PROG(cerb_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig, const struct cred *cred,
             int ret)
{
    if (!hook_arg_null(ctx, 3))
        return ret;
    return judge_task_act(p, CERB_OP_SIGNAL, ret);
}

CERB_HOOK(task_setnice, security_task_setnice)
int CERB_PROG(cerb_task_setnice, struct task_struct *p, int nice, int ret)
{
    return judge_task_act(p, CERB_OP_TASK, ret);
}

CERB_HOOK(task_setioprio, security_task_setioprio)
int CERB_PROG(cerb_task_setioprio, struct task_struct *p, int ioprio, int ret)
{
    return judge_task_act(p, CERB_OP_TASK, ret);
}

/* sched_setscheduler, sched_setparam, sched_setattr, sched_setaffinity. */
CERB_HOOK(task_setscheduler, security_task_setscheduler)
int CERB_PROG(cerb_task_setscheduler, struct task_struct *p, int ret)
{
    return judge_task_act(p, CERB_OP_TASK, ret);
}

/* migrate_pages, move_pages. */
CERB_HOOK(task_movememory, security_task_movememory)
int CERB_PROG(cerb_task_movememory, struct task_struct *p, int ret)
{
    return judge_task_act(p, CERB_OP_TASK, ret);
}

/* SIGIO and SIGURG through a file's owner (fcntl F_SETOWN, F_SETOWN_EX, a
 * process group, FIOSETOWN, a tty's or a lease's owner, the signal F_SETSIG
 * chose) are sent by whatever task or interrupt makes the I/O happen, never
 * through task_kill: the container that set the owner is remembered with the
 * file, and delivery to any task outside it refused. Keyed by the file's
 * address, from file_set_fowner (the setter's context) to file_free_security. */
struct file_owner_setter {
    __u64 cgroup_id; /* the setter's policy cgroup */
    __u32 level;     /* its level */
    __u32 setter;    /* the setter's pid, reported with a refusal */
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, CERB_MAX_OWNED_FILES);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, __u64);
    __type(value, struct file_owner_setter);
} cerb_file_owners SEC(".maps");

/* From Linux 6.12 the owner is allocated apart and points back to its file;
 * up to 6.11 it is the file's member f_owner. */
struct fown_struct___with_file {
    struct file *file;
} __attribute__((preserve_access_index));

static __always_inline __u64 file_of_owner(__u64 fown)
{
    if (bpf_core_field_exists(struct fown_struct___with_file, file))
        return (__u64)BPF_CORE_READ((struct fown_struct___with_file *)fown, file);
    return fown - bpf_core_field_offset(struct file, f_owner);
}

/* The setter's container for a file, set for a policed setter (whatever the
 * target: it is judged at delivery, when a process group's members are
 * known). False when the map has no room for another file. */
static __always_inline bool remember_owner_setter(__u64 file, __u64 cgroup_id, int level)
{
    struct file_owner_setter setter = {
        .cgroup_id = cgroup_id, .level = level, .setter = bpf_get_current_pid_tgid() >> 32};
    return bpf_map_update_elem(&cerb_file_owners, &file, &setter, BPF_ANY) == 0;
}

/* The calls that set a file's owner to a process the agent names are
 * remembered before the owner is set, where a refusal is still possible: a
 * full map refuses the call (ENOSPC) rather than let an owner go unjudged.
 * file_set_fowner then finds the entry and overwrites it, which needs no
 * room. (F_SETLEASE and F_NOTIFY make the caller itself the owner.) */
#define CERB_F_SETOWN 8
#define CERB_F_SETOWN_EX 15
#define CERB_FIOSETOWN 0x8901
#define CERB_SIOCSPGRP 0x8902

static __always_inline int make_room_for_owner(unsigned long long *ctx)
{
    __u64 cgroup_id;
    int level;
    struct cerb_policy *policy = find_armed_policy_at(&cgroup_id, &level);
    if (!policy || remember_owner_setter(hook_arg_value(ctx, 0), cgroup_id, level))
        return 0;
    return refuse(policy, cgroup_id, CERB_OP_SIGNAL, CERB_RULE_OWNER_UNREMEMBERED, ENOSPC, CERB_TARGET_NONE, 0);
}

CERB_HOOK(file_fcntl, security_file_fcntl)
int CERB_PROG(cerb_file_fcntl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
    if (ret || (cmd != CERB_F_SETOWN && cmd != CERB_F_SETOWN_EX))
        return ret;
    return make_room_for_owner(ctx);
}

static __always_inline int owner_ioctl(unsigned long long *ctx, unsigned int cmd, int ret)
{
    if (ret || (cmd != CERB_FIOSETOWN && cmd != CERB_SIOCSPGRP))
        return ret;
    return make_room_for_owner(ctx);
}

CERB_HOOK(file_ioctl, security_file_ioctl)
int CERB_PROG(cerb_file_ioctl, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
    return owner_ioctl(ctx, cmd, ret);
}

/* The i386 ABI's ioctl from Linux 6.8 on; before, it calls file_ioctl. */
CERB_HOOK(file_ioctl_compat, security_file_ioctl_compat)
int CERB_PROG(cerb_file_ioctl_compat, struct file *file, unsigned int cmd, unsigned long arg, int ret)
{
    return owner_ioctl(ctx, cmd, ret);
}

/* Every owner set; a setter that is not a policed agent clears what an
 * agent set on the file before. */
CERB_VOID_HOOK(file_set_fowner, security_file_set_fowner)
int CERB_PROG(cerb_file_set_fowner, struct file *file)
{
    __u64 cgroup_id;
    int level;
    __u64 key = hook_arg_value(ctx, 0);
    struct cerb_policy *policy = find_armed_policy_at(&cgroup_id, &level);
    if (!policy)
        bpf_map_delete_elem(&cerb_file_owners, &key);
    else
        remember_owner_setter(key, cgroup_id, level); /* room made by the call's hook above */
    return 0;
}

CERB_HOOK(file_send_sigiotask, security_file_send_sigiotask)
int CERB_PROG(cerb_file_send_sigiotask, struct task_struct *tsk, struct fown_struct *fown, int sig, int ret)
{
    if (ret)
        return ret;
    __u64 key = file_of_owner(hook_arg_value(ctx, 1));
    struct file_owner_setter *found = bpf_map_lookup_elem(&cerb_file_owners, &key);
    if (!found)
        return 0;
    struct file_owner_setter setter = *found;
    if (task_in_container(tsk, setter.cgroup_id, setter.level))
        return 0;
    struct cerb_policy *policy = bpf_map_lookup_elem(&cerb_policies, &setter.cgroup_id);
    if (!policy) /* the container is gone and its file lives on (passed to another process) */
        return -EPERM;
    /* Often sent from an interrupt: the event names the setter, not the current task. */
    struct cerb_event *e = event_reserve(policy, setter.cgroup_id, CERB_OP_SIGNAL, CERB_RULE_OUTSIDE_CONTAINER, EPERM);
    if (e) {
        e->pid = setter.setter;
        e->tid = setter.setter;
        e->target_kind = CERB_TARGET_NUMBER;
        e->number = BPF_CORE_READ(tsk, tgid);
        bpf_ringbuf_submit(e, 0);
    }
    return verdict(policy, EPERM);
}

CERB_VOID_HOOK(file_free_security, security_file_free)
int CERB_PROG(cerb_file_free_security, struct file *file)
{
    __u64 key = hook_arg_value(ctx, 0);
    bpf_map_delete_elem(&cerb_file_owners, &key);
    return 0;
}

/* Argument n (0..3) of the system call the current task is in, in the
 * 64-bit or the i386 ABI's registers; *nr: its number. */
static __always_inline __u32 syscall_argument(int n, long *nr)
{
    struct task_struct *task = bpf_get_current_task_btf();
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
    bool i386 = BPF_CORE_READ(task, thread_info.status) & TS_COMPAT;
    *nr = BPF_CORE_READ(regs, orig_ax) + (i386 ? I386_NR_OFFSET : 0);
    switch (n) {
    case 0: return i386 ? BPF_CORE_READ(regs, bx) : BPF_CORE_READ(regs, di);
    case 1: return i386 ? BPF_CORE_READ(regs, cx) : BPF_CORE_READ(regs, si);
    case 2: return BPF_CORE_READ(regs, dx);
    default: return i386 ? BPF_CORE_READ(regs, si) : BPF_CORE_READ(regs, r10);
    }
}

/* prlimit of another process: the hook is given credentials, not the task.
 * Every process of the container shares the session keyring the runtime made
 * for it (the agent can neither make nor join another: key_alloc,
 * key_permission), so in a shared pid namespace (where processes outside have
 * numbers the agent can name) a target with another session keyring is not
 * the container's. Processes started by `cerberus exec` have a keyring of
 * their own: between them and the init's, prlimit is refused too. */
CERB_HOOK(task_prlimit, security_task_prlimit)
int CERB_PROG(cerb_task_prlimit, const struct cred *cred, const struct cred *tcred, unsigned int flags, int ret)
{
    __u64 cgroup_id;
    long nr;
    if (ret || cred == tcred)
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_SHARED_PIDS))
        return 0;
    struct key *own = BPF_CORE_READ(cred, session_keyring);
    if (own && own == BPF_CORE_READ(tcred, session_keyring))
        return 0;
    return refuse(policy, cgroup_id, CERB_OP_TASK, CERB_RULE_OUTSIDE_CONTAINER, EPERM, CERB_TARGET_NUMBER,
                  syscall_argument(0, &nr));
}

/* Keyrings are not namespaced: without a user namespace the host root's user
 * keyring is the agent's too. The agent may neither use nor make a key (its
 * session keyring was made by the runtime before the policy armed). The
 * target reported is the key id the system call named (keyctl's second
 * argument, add_key's and request_key's keyring; -4: the user keyring): the
 * key itself is out of the program's reach (key_permission's key_ref_t points
 * to a type BTF declares only, which the verifier refuses to read), and a
 * key being made has no serial yet. */
static __always_inline int refuse_keyring(int ret)
{
    __u64 cgroup_id;
    long nr;
    if (ret)
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy)
        return 0;
    __u32 key = syscall_argument(1, &nr);
    if (nr != NR_KEYCTL && nr != I386_NR_OFFSET + NR_I386_KEYCTL)
        key = syscall_argument(3, &nr);
    return refuse(policy, cgroup_id, CERB_OP_KEYRING, CERB_RULE_OUTSIDE_CONTAINER, EPERM, CERB_TARGET_NUMBER, key);
}

CERB_HOOK(key_permission, security_key_permission)
int CERB_PROG(cerb_key_permission, key_ref_t key_ref, const struct cred *cred, enum key_need_perm need_perm, int ret)
{
    return refuse_keyring(ret);
}

CERB_HOOK(key_alloc, security_key_alloc)
int CERB_PROG(cerb_key_alloc, struct key *key, const struct cred *cred, unsigned long flags, int ret)
{
    return refuse_keyring(ret);
}

static __always_inline bool is_userfaultfd(const unsigned char *name)
{
    static const char wanted[] = "[userfaultfd]";
    char kind[sizeof(wanted)] = {};
    if (bpf_probe_read_kernel_str(kind, sizeof(kind), name) != sizeof(kind))
        return false;
    for (int i = 0; i < sizeof(wanted); i++) {
        if (kind[i] != wanted[i])
            return false;
    }
    return true;
}

/* userfaultfd (the system call, or /dev/userfaultfd's request) holds the
 * kernel on a page fault for as long as the agent likes: a race primitive.
 * Its descriptor is an anonymous inode made with this hook. */
CERB_HOOK(inode_init_security_anon, security_inode_init_security_anon)
int CERB_PROG(cerb_inode_init_security_anon, struct inode *inode, const struct qstr *name,
             const struct inode *context_inode, int ret)
{
    __u64 cgroup_id;
    if (ret || !is_userfaultfd(BPF_CORE_READ(name, name)))
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy)
        return 0;
    return refuse(policy, cgroup_id, CERB_OP_USERFAULTFD, CERB_RULE_ESCALATION, EPERM, CERB_TARGET_NONE, 0);
}
