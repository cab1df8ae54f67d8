// SPDX-License-Identifier: GPL-2.0-only
/* The landlock backend's call observer: Landlock, seccomp and the runtime's
 * read-only mounts refuse without telling anyone (Landlock logs only to
 * kernel audit, from ABI 7, when audit is on), so this watches each system
 * call of a policed container come back (the sys_exit tracepoint, which loads
 * where BPF LSM, fentry and kprobes do not) and sends the calls that failed
 * the way a refusal does (bpf/cerberus_calls.h), with the names they passed
 * and where relative ones start, for the collector to judge against the
 * container's policy. Nothing here refuses anything.
 *
 * Capabilities: a forbidden capability's check is noted per task (the
 * cap_capable tracepoint from Linux 6.14, which has no CAP_OPT_NOAUDIT to
 * tell a kernel's probe from a use, so the note counts only when the same
 * call then fails with EPERM), or reported at once from a kprobe, which sees
 * the options, where the kernel has kprobes. */

#define CERB_THIS_BACKEND CERB_BACKEND_LANDLOCK
#include "policy_common.bpf.h"
#include "policy_paths.bpf.h"

#include "cerberus_calls.h"

char LICENSE[] SEC("license") = "GPL";

#define EBUSY 16
#define EXDEV 18
#define EROFS 30

struct call_names {
    int dir[2];
    int path[2];
};

/* Where the call names its objects; false for a call not observed. */
static __always_inline bool names_of(long nr, struct call_names *names)
{
#define CERB_CALL_CASE(name, number, d0, p0, d1, p1)                                                       \
    case number:                                                                                           \
        names->dir[0] = d0;                                                                                \
        names->path[0] = p0;                                                                               \
        names->dir[1] = d1;                                                                                \
        names->path[1] = p1;                                                                               \
        return true;
    switch (nr) {
        CERB_CALLS(CERB_CALL_CASE)
    default:
        return false;
    }
#undef CERB_CALL_CASE
}

/* A forbidden capability's failed check during the task's current call,
 * known by the call's number and the user registers it will return to. */
struct cap_check {
    __u64 ip;
    __u64 sp;
    __u32 nr;
    __u32 cap;
};

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct cap_check);
} cerb_cap_checks SEC(".maps");

static __always_inline struct file *file_of(struct task_struct *task, int fd)
{
    struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
    if (fd < 0 || fd >= (int)BPF_CORE_READ(fdt, max_fds))
        return NULL;
    struct file **fds = BPF_CORE_READ(fdt, fd);
    struct file *file = NULL;
    bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]);
    return file;
}

/* One name: the path argument as passed and, unless it is absolute, the
 * directory it starts from (or the file an fd-only call names). */
static __always_inline void read_name(struct cerb_call_name *name, const __u64 *args, int dir, int path, __u32 *flags)
{
    if ((unsigned int)path < 6) {
        long n = bpf_probe_read_user_str(name->path, sizeof(name->path), (const void *)args[path]);
        if (n >= (long)sizeof(name->path))
            *flags |= CERB_CALL_TRUNCATED;
        if (n > 1 && name->path[0] == '/')
            return;
        if (n <= 0)
            name->path[0] = 0;
    }
    int fd = CERB_AT_FDCWD;
    if ((unsigned int)dir < 6)
        fd = (int)args[dir];
    else if (dir != CERB_ARG_CWD)
        return;
    struct task_struct *task = bpf_get_current_task_btf();
    struct dentry *dentry;
    struct vfsmount *mnt;
    if (fd == CERB_AT_FDCWD) {
        dentry = BPF_CORE_READ(task, fs, pwd.dentry);
        mnt = BPF_CORE_READ(task, fs, pwd.mnt);
    } else {
        struct file *file = file_of(task, fd);
        if (!file)
            return;
        dentry = BPF_CORE_READ(file, f_path.dentry);
        mnt = BPF_CORE_READ(file, f_path.mnt);
    }
    struct scratch *s = get_scratch();
    if (!s)
        return;
    if (build_path(s, dentry, mnt, NULL) <= 0) {
        *flags |= CERB_CALL_TRUNCATED;
        return;
    }
    if (bpf_probe_read_kernel_str(name->dir, sizeof(name->dir), s->path) >= (long)sizeof(name->dir))
        *flags |= CERB_CALL_TRUNCATED;
}

/* The container's own program runs from its first exec on: before it, only
 * the runtime's set-up, which is not the agent's doing. */
static __always_inline void arm_after_exec(long nr)
{
    __u64 cgroup_id;
    if (nr != CERB_NR_EXECVE && nr != CERB_NR_EXECVEAT)
        return;
    struct cerb_policy *policy = find_policy(&cgroup_id);
    if (policy && !(policy->flags & CERB_ARMED))
        policy->flags |= CERB_ARMED; /* only programs write flags after install; racing writers set the same bit */
}

static __always_inline bool refusal_errno(long err)
{
    return err == EACCES || err == EPERM || err == EROFS || err == EXDEV || err == EBUSY;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(cerb_call_exit, struct pt_regs *regs, long ret)
{
    /* Every successful call of every task on the host comes here: the call's number is loaded directly
     * from the trusted pointer the tracepoint passes (a probe read is a helper call), and only for calls
     * that return 0, as an exec does. */
    if (ret >= 0) {
        if (ret == 0)
            arm_after_exec(regs->orig_ax);
        return 0;
    }
    long err = -ret;
    if (!refusal_errno(err))
        return 0;
    long nr = BPF_CORE_READ(regs, orig_ax);
    struct task_struct *task = bpf_get_current_task_btf();
    struct call_names names;
    bool named = names_of(nr, &names);
    struct cap_check *cap = err == EPERM ? bpf_task_storage_get(&cerb_cap_checks, task, 0, 0) : NULL;
    if (!named && !cap)
        return 0;
    bool cap_of_call = cap && cap->nr == nr && cap->ip == BPF_CORE_READ(regs, ip) && cap->sp == BPF_CORE_READ(regs, sp);
    __u32 cap_number = cap ? cap->cap : 0;
    if (cap)
        bpf_task_storage_delete(&cerb_cap_checks, task);
    if (!named && !cap_of_call)
        return 0;
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    /* Audit mode refuses nothing but the forbidden capabilities every backend drops: its calls are judged
     * before they run. */
    if (!policy || (!(policy->flags & CERB_ENFORCE) && !cap_of_call))
        return 0;
    struct cerb_call_event *e = share_reserve(policy, cgroup_id, sizeof(*e));
    if (!e)
        return 0;
    /* Too large for one memset: every field is written, names as empty strings. */
    e->flags = 0;
    e->cap = 0;
    e->names[0].dir[0] = e->names[0].path[0] = e->names[1].dir[0] = e->names[1].path[0] = 0;
    __u64 pid_tgid = bpf_get_current_pid_tgid();
    __u64 uid_gid = bpf_get_current_uid_gid();
    e->time_ns = bpf_ktime_get_boot_ns();
    e->cgroup_id = cgroup_id;
    e->pid = pid_tgid >> 32;
    e->tid = (__u32)pid_tgid;
    e->uid = (__u32)uid_gid;
    e->gid = uid_gid >> 32;
    bpf_get_current_comm(e->comm, sizeof(e->comm));
    e->args[0] = BPF_CORE_READ(regs, di);
    e->args[1] = BPF_CORE_READ(regs, si);
    e->args[2] = BPF_CORE_READ(regs, dx);
    e->args[3] = BPF_CORE_READ(regs, r10);
    e->args[4] = BPF_CORE_READ(regs, r8);
    e->args[5] = BPF_CORE_READ(regs, r9);
    e->nr = nr;
    e->err = err;
    if (cap_of_call) {
        e->flags |= CERB_CALL_CAPABILITY;
        e->cap = cap_number;
    }
    if (nr == CERB_NR_OPENAT2) { /* the open_how it points to: only its flags matter */
        __u64 how_flags = 0;
        bpf_probe_read_user(&how_flags, sizeof(how_flags), (const void *)e->args[2]);
        e->args[2] = how_flags;
    }
    if (named) {
        read_name(&e->names[0], e->args, names.dir[0], names.path[0], &e->flags);
        read_name(&e->names[1], e->args, names.dir[1], names.path[1], &e->flags);
    }
    bpf_ringbuf_submit(e, 0);
    return 0;
}

static __always_inline struct cerb_policy *forbidding_policy(int cap, __u64 *cgroup_id)
{
    if (cap < 0 || cap > 63)
        return NULL;
    struct cerb_policy *policy = find_armed_policy(cgroup_id);
    return policy && (policy->forbidden_caps & (1ULL << cap)) ? policy : NULL;
}

/* Linux 6.14 on: notes a forbidden capability's failed check for sys_exit. */
SEC("tp_btf/cap_capable")
int BPF_PROG(cerb_cap_check, const struct cred *cred, struct user_namespace *target_ns,
             const struct user_namespace *capable_ns, int cap, int ret)
{
    __u64 cgroup_id;
    if (!ret || !forbidding_policy(cap, &cgroup_id))
        return 0;
    struct task_struct *task = bpf_get_current_task_btf();
    struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
    struct cap_check *check = bpf_task_storage_get(&cerb_cap_checks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (!check)
        return 0;
    check->nr = BPF_CORE_READ(regs, orig_ax);
    check->ip = BPF_CORE_READ(regs, ip);
    check->sp = BPF_CORE_READ(regs, sp);
    check->cap = cap;
    return 0;
}

/* Where the kernel has kprobes: every forbidden capability the task asks for
 * (not the kernel's own probes), refused: it is dropped from every set. */
SEC("kprobe/cap_capable")
int BPF_KPROBE(cerb_cap_kprobe, const struct cred *cred, struct user_namespace *ns, int cap, unsigned int opts)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = forbidding_policy(cap, &cgroup_id);
    if (!policy || (opts & CAP_OPT_NOAUDIT))
        return 0;
    struct cerb_event *e = event_start(policy, cgroup_id, CERB_OP_CAPABILITY, CERB_RULE_FORBIDDEN_CAP, EPERM);
    if (!e)
        return 0;
    e->verdict = CERB_VERDICT_DENIED; /* dropped from every set, in audit mode too */
    e->target_kind = CERB_TARGET_CAPABILITY;
    e->number = cap;
    bpf_ringbuf_submit(e, 0);
    return 0;
}
