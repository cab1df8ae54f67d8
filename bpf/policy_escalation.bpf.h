/* SPDX-License-Identifier: GPL-2.0-only */
/* Escalation, refused under every policy: capabilities the policy forbids,
 * bpf, perf_event_open, module loading, new user namespaces, mounts and
 * chroot. Programs, included where they stand in the order of bpf_hooks.cpp. */

#pragma once

CERB_HOOK(capable, security_capable)
int CERB_PROG(cerb_capable, const struct cred *cred, struct user_namespace *ns, int cap, unsigned int opts, int ret)
{
    __u64 cgroup_id;
    if (ret || cap < 0 || cap > 63)
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy || !(policy->forbidden_caps & (1ULL << cap)))
        return 0;
    if (opts & CAP_OPT_NOAUDIT) /* a probe by the kernel, not a request by the task */
        return verdict(policy, EPERM);
    return refuse(policy, cgroup_id, CERB_OP_CAPABILITY, CERB_RULE_FORBIDDEN_CAP, EPERM, CERB_TARGET_CAPABILITY, cap);
}

/* An escalation no policy allows, refused from a policed container; number
 * says which (the bpf command, the perf event type, the kind of kernel load). */
static __always_inline int refuse_escalation(__u16 op, __u32 number, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (ret || !policy)
        return ret;
    return refuse(policy, cgroup_id, op, CERB_RULE_ESCALATION, EPERM, CERB_TARGET_NUMBER, number);
}

/* Up to Linux 6.13. */
CERB_HOOK(bpf, security_bpf)
int CERB_PROG(cerb_bpf, int cmd, union bpf_attr *attr, unsigned int size, int ret)
{
    return refuse_escalation(CERB_OP_BPF, cmd, ret);
}

/* From 6.14 on the hook also says whether the call came from the kernel (a BPF syscall
 * program): refused all the same, as the agent may load none. */
CERB_HOOK(bpf, security_bpf)
int CERB_PROG(cerb_bpf_from_kernel, int cmd, union bpf_attr *attr, unsigned int size, bool kernel, int ret)
{
    return refuse_escalation(CERB_OP_BPF, cmd, ret);
}

/* Up to Linux 6.1 (at least): the attribute first. */
CERB_HOOK(perf_event_open, security_perf_event_open)
int CERB_PROG(cerb_perf_event_open, struct perf_event_attr *attr, int type, int ret)
{
    return refuse_escalation(CERB_OP_PERF_EVENT, type, ret);
}

/* Later kernels pass the type alone. */
CERB_HOOK(perf_event_open, security_perf_event_open)
int CERB_PROG(cerb_perf_event_open_type, int type, int ret)
{
    return refuse_escalation(CERB_OP_PERF_EVENT, type, ret);
}

CERB_HOOK(kernel_module_request, security_kernel_module_request)
int CERB_PROG(cerb_kernel_module_request, char *kmod_name, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (ret || !policy)
        return ret;
    struct cerb_event *e = event_start(policy, cgroup_id, CERB_OP_MODULE, CERB_RULE_ESCALATION, EPERM);
    if (e) {
        e->target_kind = CERB_TARGET_PATH;
        long n = bpf_probe_read_kernel_str(e->path, sizeof(e->path), kmod_name);
        e->path_len = n > 0 ? n - 1 : 0;
        bpf_ringbuf_submit(e, 0);
    }
    return verdict(policy, EPERM);
}

CERB_HOOK(kernel_read_file, security_kernel_read_file)
int CERB_PROG(cerb_kernel_read_file, struct file *file, enum kernel_read_file_id id, bool contents, int ret)
{
    if (ret || (id != READING_MODULE && id != READING_KEXEC_IMAGE && id != READING_KEXEC_INITRAMFS))
        return ret;
    return refuse_escalation(id == READING_MODULE ? CERB_OP_MODULE : CERB_OP_KEXEC, id, ret);
}

CERB_HOOK(kernel_load_data, security_kernel_load_data)
int CERB_PROG(cerb_kernel_load_data, enum kernel_load_data_id id, bool contents, int ret)
{
    if (ret || (id != LOADING_MODULE && id != LOADING_KEXEC_IMAGE))
        return ret;
    return refuse_escalation(id == LOADING_MODULE ? CERB_OP_MODULE : CERB_OP_KEXEC, id, ret);
}

CERB_HOOK(userns_create, security_create_user_ns)
int CERB_PROG(cerb_userns_create, const struct cred *cred, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (ret || !policy)
        return ret;
    return refuse(policy, cgroup_id, CERB_OP_USERNS, CERB_RULE_ESCALATION, EPERM, CERB_TARGET_NONE, 0);
}

/* Under path rules a path must keep naming what it named at start: a mount
 * would give a file a second, allowed name, an unmount would show what a
 * mount covered, and a new root (chroot, pivot_root) would make every path
 * name something else. */
static __always_inline int refuse_name_change(__u16 op, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (ret || !policy || !(policy->flags & (CERB_HAS_PATHS | CERB_HAS_DENIED | CERB_HAS_BINS)))
        return ret;
    return refuse(policy, cgroup_id, op, CERB_RULE_ESCALATION, EPERM, CERB_TARGET_NONE, 0);
}

CERB_HOOK(sb_mount, security_sb_mount)
int CERB_PROG(cerb_sb_mount, const char *dev_name, const struct path *path, const char *type, unsigned long flags,
             void *data, int ret)
{
    return refuse_name_change(CERB_OP_MOUNT, ret);
}

CERB_HOOK(move_mount, security_move_mount)
int CERB_PROG(cerb_move_mount, const struct path *from_path, const struct path *to_path, int ret)
{
    return refuse_name_change(CERB_OP_MOUNT, ret);
}

CERB_HOOK(sb_umount, security_sb_umount)
int CERB_PROG(cerb_sb_umount, struct vfsmount *mnt, int flags, int ret)
{
    return refuse_name_change(CERB_OP_MOUNT, ret);
}

CERB_HOOK(sb_pivotroot, security_sb_pivotroot)
int CERB_PROG(cerb_sb_pivotroot, const struct path *old_path, const struct path *new_path, int ret)
{
    return refuse_name_change(CERB_OP_MOUNT, ret);
}

CERB_HOOK(path_chroot, security_path_chroot)
int CERB_PROG(cerb_path_chroot, const struct path *path, int ret)
{
    return refuse_name_change(CERB_OP_CHROOT, ret);
}
