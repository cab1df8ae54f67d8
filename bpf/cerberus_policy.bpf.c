// SPDX-License-Identifier: GPL-2.0-only
/* The agent policy, enforced by BPF LSM programs or, built with CERB_FMOD_RET,
 * by the same programs as fmod_ret on the kernel's security_ functions (see
 * CERB_HOOK). A hook whose prototype changed between kernels has a program
 * per prototype (the body shared); the loader reads the running kernel's BTF
 * and loads the one that fits (bpf_hooks.cpp). Loaded once per host and pinned; every hook first finds the
 * policy of the current task's cgroup (or of an ancestor, so nested cgroups
 * stay policed) and returns at once for tasks outside any policed container.
 * Rules come from the maps that policy_compile fills; layouts are in
 * cerberus_policy.h. Every hook is listed with the security_ function that
 * calls it, and the rules it serves, in runtime/lib/policy/bpf_hooks.cpp. */

#include "policy_common.bpf.h"
#include "policy_net.bpf.h"
#include "policy_inode.bpf.h"
#include "policy_paths.bpf.h"

char LICENSE[] SEC("license") = "GPL";

CERB_HOOK(file_open, security_file_open)
int CERB_PROG(cerb_file_open, struct file *file, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_policy(&cgroup_id);
    if (ret || !policy || !(policy->flags & (CERB_HAS_PATHS | CERB_HAS_DENIED)))
        return ret;
    bool exec = file->f_flags & FMODE_EXEC;
    if (!(policy->flags & CERB_ARMED) && !exec)
        return 0;
    struct mnt_namespace *ns = mount_ns(file->f_path.mnt);
    if (ns == MNT_NS_INTERNAL)
        return 0;
    struct scratch *s = get_scratch();
    if (!s)
        return ret;
    long size = bpf_d_path(&file->f_path, s->path, sizeof(s->path));
    /* Pipes, sockets and anonymous inodes reopened through /proc are objects
     * the task already holds, not places in the file system. */
    if (size > 0 && s->path[0] != '/')
        return 0;
    bool want_write = (file->f_mode & FMODE_WRITE) || (file->f_flags & O_TRUNC);
    __u32 rule_len = 0;
    __u16 rule = ns_detached(ns) ? CERB_RULE_DETACHED_MOUNT
                                 : path_refusal(s, policy, cgroup_id, size, want_write, &rule_len);
    if (!rule)
        return 0;
    /* The runtime's set-up task is not judged (judged_as_agent) but for what
     * it execs. Its mark is looked for only once an open would be refused: a
     * task storage lookup that every allowed open paid. */
    if (!exec && !judged_as_agent(policy, cgroup_id))
        return 0;
    return refuse_path(policy, cgroup_id, CERB_OP_OPEN, rule, EACCES, rule_len, want_write ? CERB_ACCESS_WRITE : 0);
}

/* allowed_bins: only the listed files may be exec'd, by the path the kernel
 * resolved (so memfds, copies and links elsewhere do not match). */
CERB_HOOK(bprm_check_security, security_bprm_check)
int CERB_PROG(cerb_bprm_check, struct linux_binprm *bprm, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_policy(&cgroup_id);
    if (ret || !policy || !(policy->flags & CERB_HAS_BINS))
        return ret;
    struct scratch *s = get_scratch();
    if (!s)
        return ret;
    if (mount_detached(BPF_CORE_READ(bprm, file, f_path.mnt)))
        return refuse_path(policy, cgroup_id, CERB_OP_EXEC, CERB_RULE_DETACHED_MOUNT, EACCES, 0, 0);
    long size = exec_file_path(s, bprm->file);
    struct path_walk *w = walk_path(s, policy, cgroup_id, size);
    if (!w)
        return refuse_path(policy, cgroup_id, CERB_OP_EXEC, CERB_RULE_PATH_UNRESOLVED, EACCES, 0, 0);
    if (w->exact_kinds & CERB_PATH_BIN)
        return 0;
    return refuse_path(policy, cgroup_id, CERB_OP_EXEC, CERB_RULE_NOT_IN_ALLOWED_BINS, EACCES, 0, 0);
}

/* Arms the policy once an exec in the container has succeeded, and ends the
 * exemption of a runtime's set-up task that exec'd: from the new program's
 * first instruction on, every rule applies to it. */
CERB_VOID_HOOK(bprm_committed_creds, security_bprm_committed_creds)
int CERB_PROG(cerb_bprm_committed_creds, struct linux_binprm *bprm)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_policy(&cgroup_id);
    if (!policy)
        return 0;
    if (!(policy->flags & CERB_ARMED))
        policy->flags |= CERB_ARMED; /* only programs write flags after install; racing writers set the same bit */
    bpf_task_storage_delete(&cerb_setup_tasks, bpf_get_current_task_btf());
    return 0;
}

#include "policy_tasks.bpf.h"

/* With allowed_bins, executable file mappings must come from an allowed
 * binary or from under read_only_paths: this stops the dynamic loader run
 * directly on an unlisted file. prot is the protection the kernel applies. */
static __always_inline int check_exec_mapping(struct file *file, unsigned long prot, bool walk, int ret)
{
    __u64 cgroup_id;
    if (ret || !file || !(prot & PROT_EXEC))
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_BINS))
        return 0;
    struct scratch *s = get_scratch();
    if (!s)
        return 0;
    if (mount_detached(BPF_CORE_READ(file, f_path.mnt)))
        return refuse_path(policy, cgroup_id, CERB_OP_MMAP_EXEC, CERB_RULE_DETACHED_MOUNT, EACCES, 0, 0);
    long size = walk ? walked_file_path(s, file) : exec_file_path(s, file);
    struct path_walk *w = walk_path(s, policy, cgroup_id, size);
    if (!w)
        return refuse_path(policy, cgroup_id, CERB_OP_MMAP_EXEC, CERB_RULE_PATH_UNRESOLVED, EACCES, 0, 0);
    if ((w->exact_kinds & CERB_PATH_BIN) || w->allow_kinds == CERB_PATH_READ_ONLY)
        return 0;
    return refuse_path(policy, cgroup_id, CERB_OP_MMAP_EXEC, CERB_RULE_EXEC_MAPPING, EACCES, 0, 0);
}

#ifdef CERB_FMOD_RET
/* security_mmap_file is given the protection the caller asked for; the LSM
 * hook gets it widened as mmap_prot() does: with READ_IMPLIES_EXEC, a readable
 * mapping is executable unless the file is on a noexec mount. */
static __always_inline unsigned long applied_prot(struct file *file, unsigned long prot)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    if ((prot & (PROT_READ | PROT_EXEC)) != PROT_READ || !(BPF_CORE_READ(task, personality) & READ_IMPLIES_EXEC))
        return prot;
    if (!file)
        return prot | PROT_EXEC;
    struct vfsmount *mnt = BPF_CORE_READ(file, f_path.mnt);
    bool noexec = (BPF_CORE_READ(mnt, mnt_flags) & MNT_NOEXEC) || (BPF_CORE_READ(mnt, mnt_sb, s_iflags) & SB_I_NOEXEC);
    return noexec ? prot : prot | PROT_EXEC;
}

CERB_HOOK(mmap_file, security_mmap_file)
int CERB_PROG(cerb_mmap_file, struct file *file, unsigned long reqprot, unsigned long flags, int ret)
{
    return check_exec_mapping(file, applied_prot(file, reqprot), false, ret);
}
#else
CERB_HOOK(mmap_file, security_mmap_file)
int CERB_PROG(cerb_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot, unsigned long flags,
             int ret)
{
    return check_exec_mapping(file, prot, false, ret);
}
#endif

/* mprotect adding PROT_EXEC to a file mapping is judged as an executable
 * mmap of that file: otherwise mapping it PROT_READ first would get round
 * check_exec_mapping. A mapping already executable was judged when it was. */
CERB_HOOK(file_mprotect, security_file_mprotect)
int CERB_PROG(cerb_file_mprotect, struct vm_area_struct *vma, unsigned long reqprot, unsigned long prot, int ret)
{
    /* The file is walked to, not given to bpf_d_path: 6.1's verifier takes
     * only the hook's own arguments there. */
    if (BPF_CORE_READ(vma, vm_flags) & VM_EXEC)
        return ret;
    return check_exec_mapping(BPF_CORE_READ(vma, vm_file), prot, true, ret);
}

CERB_HOOK(socket_connect, security_socket_connect)
int CERB_PROG(cerb_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (ret || !policy)
        return ret;
    return check_destination(policy, cgroup_id, sock, address, addrlen, CERB_OP_CONNECT);
}

CERB_HOOK(unix_stream_connect, security_unix_stream_connect)
int CERB_PROG(cerb_unix_stream_connect, struct sock *sock, struct sock *other, struct sock *newsk, int ret)
{
    return check_unix_peer(other, ret);
}

/* Datagram connects and every datagram send, to a connected peer or not. */
CERB_HOOK(unix_may_send, security_unix_may_send)
int CERB_PROG(cerb_unix_may_send, struct socket *sock, struct socket *other, int ret)
{
    return check_unix_peer(other ? BPF_CORE_READ(other, sk) : NULL, ret);
}

/* Unconnected sends (sendto/sendmsg with an address) name their destination here. */
CERB_HOOK(socket_sendmsg, security_socket_sendmsg)
int CERB_PROG(cerb_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size, int ret)
{
    __u64 cgroup_id;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (ret || !policy)
        return ret;
    void *name = BPF_CORE_READ(msg, msg_name);
    if (!name)
        return 0;
    return check_destination(policy, cgroup_id, sock, name, BPF_CORE_READ(msg, msg_namelen), CERB_OP_SENDMSG);
}

CERB_HOOK(socket_create, security_socket_create)
int CERB_PROG(cerb_socket_create, int family, int type, int protocol, int kern, int ret)
{
    __u64 cgroup_id;
    if (ret || kern)
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_HOSTS))
        return 0;
    int kind = type & SOCK_TYPE_MASK;
    __u16 rule = 0;
    if (family == AF_PACKET || kind == SOCK_RAW || kind == SOCK_PACKET)
        rule = CERB_RULE_RAW_SOCKET;
    else if (family == AF_NETLINK) /* its datagram sockets are its raw ones */
        rule = CERB_RULE_ADDRESS_FAMILY;
    else if ((family == AF_INET || family == AF_INET6) && !inet_protocol_allowed(kind, protocol))
        rule = CERB_RULE_PROTOCOL;
    if (!rule)
        return 0;
    struct cerb_event *e = event_start(policy, cgroup_id, CERB_OP_SOCKET, rule, EPERM);
    if (e) {
        e->target_kind = CERB_TARGET_NUMBER;
        e->family = family;
        e->number = rule == CERB_RULE_PROTOCOL ? protocol : type;
        bpf_ringbuf_submit(e, 0);
    }
    return verdict(policy, EPERM);
}

/* Options that reroute packets (option_reroutes) are refused under
 * allowed_hosts, so the agent gets a clean EPERM where it sets them. */
CERB_HOOK(socket_setsockopt, security_socket_setsockopt)
int CERB_PROG(cerb_socket_setsockopt, struct socket *sock, int level, int optname, int ret)
{
    __u64 cgroup_id;
    if (ret || !option_reroutes(level, optname))
        return ret;
    struct cerb_policy *policy = find_armed_policy(&cgroup_id);
    if (!policy || !(policy->flags & CERB_HAS_HOSTS))
        return 0;
    return refuse(policy, cgroup_id, CERB_OP_SETSOCKOPT, CERB_RULE_REROUTED, EPERM, CERB_TARGET_NUMBER,
                  (__u32)level << 16 | (__u16)optname);
}

#include "policy_escalation.bpf.h"

CERB_HOOK(path_rename, security_path_rename)
int CERB_PROG(cerb_path_rename, const struct path *old_dir, struct dentry *old_dentry, const struct path *new_dir,
             struct dentry *new_dentry, unsigned int flags, int ret)
{
    ret = check_change(old_dir, old_dentry, CERB_OP_RENAME, true, ret);
    return check_change(new_dir, new_dentry, CERB_OP_RENAME, true, ret);
}

/* A hard link is a rename that keeps the old name: both names are written.
 * Both are in the same mount, so the old one is found through new_dir's. */
CERB_HOOK(path_link, security_path_link)
int CERB_PROG(cerb_path_link, struct dentry *old_dentry, const struct path *new_dir, struct dentry *new_dentry,
             int ret)
{
    ret = check_change(new_dir, new_dentry, CERB_OP_LINK, true, ret);
    return check_change_at(BPF_CORE_READ(old_dentry, d_parent), BPF_CORE_READ(new_dir, mnt), old_dentry,
                           CERB_OP_LINK, true, ret);
}

CERB_HOOK(path_unlink, security_path_unlink)
int CERB_PROG(cerb_path_unlink, const struct path *dir, struct dentry *dentry, int ret)
{
    return check_change(dir, dentry, CERB_OP_UNLINK, true, ret);
}

CERB_HOOK(path_rmdir, security_path_rmdir)
int CERB_PROG(cerb_path_rmdir, const struct path *dir, struct dentry *dentry, int ret)
{
    return check_change(dir, dentry, CERB_OP_UNLINK, true, ret);
}

CERB_HOOK(path_mkdir, security_path_mkdir)
int CERB_PROG(cerb_path_mkdir, const struct path *dir, struct dentry *dentry, umode_t mode, int ret)
{
    return check_change(dir, dentry, CERB_OP_CREATE, false, ret);
}

CERB_HOOK(path_mknod, security_path_mknod)
int CERB_PROG(cerb_path_mknod, const struct path *dir, struct dentry *dentry, umode_t mode, unsigned int dev,
             int ret)
{
    return check_change(dir, dentry, CERB_OP_CREATE, false, ret);
}

CERB_HOOK(path_symlink, security_path_symlink)
int CERB_PROG(cerb_path_symlink, const struct path *dir, struct dentry *dentry, const char *old_name, int ret)
{
    return check_change(dir, dentry, CERB_OP_CREATE, false, ret);
}

CERB_HOOK(path_truncate, security_path_truncate)
int CERB_PROG(cerb_path_truncate, const struct path *path, int ret)
{
    return check_change(path, NULL, CERB_OP_SETATTR, false, ret);
}

CERB_HOOK(path_chmod, security_path_chmod)
int CERB_PROG(cerb_path_chmod, const struct path *path, umode_t mode, int ret)
{
    return check_change(path, NULL, CERB_OP_SETATTR, false, ret);
}

CERB_HOOK(path_chown, security_path_chown)
int CERB_PROG(cerb_path_chown, const struct path *path, __u32 uid, __u32 gid, int ret) /* kuid_t, kgid_t */
{
    return check_change(path, NULL, CERB_OP_SETATTR, false, ret);
}

/* Times, xattrs and ACLs reach no path hook: the inode hooks judge them on
 * the mount the syscall took write access to (policy_inode.bpf.h). */
CERB_TRACE(mnt_want_write)
int CERB_PROG(cerb_mnt_want_write, struct vfsmount *mnt)
{
    note_write_mount(mnt);
    return 0;
}

CERB_TRACE(mnt_want_write_file)
int CERB_PROG(cerb_mnt_want_write_file, struct file *file)
{
    note_write_mount(BPF_CORE_READ(file, f_path.mnt));
    return 0;
}

/* security_inode_setattr takes the mount's idmap (6.1: user namespace) in
 * every kernel; the LSM hook is given it from 6.3 on. */
CERB_HOOK(inode_setattr, security_inode_setattr)
int CERB_PROG(cerb_inode_setattr, void *idmap, struct dentry *dentry, struct iattr *attr, int ret)
{
    return check_setattr(dentry, attr, ret);
}

#ifndef CERB_FMOD_RET
CERB_HOOK(inode_setattr, security_inode_setattr)
int CERB_PROG(cerb_inode_setattr_no_idmap, struct dentry *dentry, struct iattr *attr, int ret)
{
    return check_setattr(dentry, attr, ret);
}
#endif

/* Every xattr, POSIX ACLs (system.posix_acl_*) included up to Linux 6.1. */
CERB_HOOK(inode_setxattr, security_inode_setxattr)
int CERB_PROG(cerb_inode_setxattr, struct user_namespace *mnt_userns, struct dentry *dentry, const char *name,
             const void *value, size_t size, int flags, int ret)
{
    return check_inode_change(dentry, CERB_OP_XATTR, ret);
}

CERB_HOOK(inode_removexattr, security_inode_removexattr)
int CERB_PROG(cerb_inode_removexattr, struct user_namespace *mnt_userns, struct dentry *dentry, const char *name,
             int ret)
{
    return check_inode_change(dentry, CERB_OP_XATTR, ret);
}

/* From Linux 6.2 POSIX ACLs (system.posix_acl_*) pass these hooks instead of
 * the xattr ones; kernels without them send ACLs through inode_setxattr. */
CERB_HOOK(inode_set_acl, security_inode_set_acl)
int CERB_PROG(cerb_inode_set_acl, void *idmap, struct dentry *dentry, const char *acl_name, void *kacl, int ret)
{
    return check_inode_change(dentry, CERB_OP_XATTR, ret);
}

CERB_HOOK(inode_remove_acl, security_inode_remove_acl)
int CERB_PROG(cerb_inode_remove_acl, void *idmap, struct dentry *dentry, const char *acl_name, int ret)
{
    return check_inode_change(dentry, CERB_OP_XATTR, ret);
}
