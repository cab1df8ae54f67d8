/* SPDX-License-Identifier: GPL-2.0-only */
/* Changes to an inode that open no file: times, attributes, xattrs and ACLs.
 * Their LSM hooks get a dentry and no mount, and path rules name places in
 * the container's mount tree. Every syscall making such a change takes write
 * access to the mount first (mnt_want_write on the path's mount, or
 * mnt_want_write_file on the file's), so the programs on those functions note
 * the mount for the task, and the inode hook builds the path from the dentry
 * and that mount, and judges it as a write. The last mount noted stays: a
 * syscall's own comes after any earlier one's, and the changes that take
 * none are let through before it is read (check_setattr). */

#pragma once

#include "policy_paths.bpf.h"

#define ATTR_FORCE (1u << 9)
#define ATTR_KILL_SUID (1u << 11)
#define ATTR_KILL_SGID (1u << 12)
#define ATTR_FILE (1u << 13)
#define ATTR_KILL_PRIV (1u << 14)

/* Tracing programs on plain kernel functions, in both builds. */
#define CERB_TRACE(function) SEC("fentry/" #function)

/* The mount the task last took write access to. */
struct write_mount {
    __u64 mnt; /* struct vfsmount * */
};

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct write_mount);
} cerb_write_mounts SEC(".maps");

/* A mount of no namespace, which no task can name: overlayfs's private
 * clones of its layers (it opens, copies up and changes files there for the
 * task, whose access was judged on the overlay's own inode), and the kernel's
 * internal mounts of memfds and pipes. Opens and changes through it reach no
 * file the rules name as the agent sees it. */
static __always_inline bool kernel_internal(struct vfsmount *mnt)
{
    return mount_ns(mnt) == MNT_NS_INTERNAL;
}

static __always_inline void note_write_mount(struct vfsmount *mnt)
{
    __u64 cgroup_id;
    if (!find_path_policy(&cgroup_id))
        return;
    struct write_mount *w =
        bpf_task_storage_get(&cerb_write_mounts, bpf_get_current_task_btf(), 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
    if (w)
        w->mnt = (__u64)mnt;
}

/* The path rules for a change to dentry's inode: a write. A noted mount of
 * another file system than the dentry's, or none, leaves the path unknown:
 * refused. */
static __always_inline int check_inode_change(struct dentry *dentry, __u16 op, int ret)
{
    __u64 cgroup_id;
    if (ret || !find_path_policy(&cgroup_id))
        return ret;
    struct write_mount *w = bpf_task_storage_get(&cerb_write_mounts, bpf_get_current_task_btf(), 0, 0);
    struct vfsmount *mnt = w ? (struct vfsmount *)w->mnt : NULL;
    if (mnt && kernel_internal(mnt))
        return 0;
    struct super_block *noted_sb = mnt ? BPF_CORE_READ(mnt, mnt_sb) : NULL;
    if (mnt && noted_sb != BPF_CORE_READ(dentry, d_sb)) {
        /* overlayfs from 6.7 changes its layers' files (copy-up, a change passed down) under
         * sb_start_write alone, taking no write access to its private mount: a change on another
         * file system right after the task took write access to an overlay is the overlay's own,
         * the task's access having been judged on the overlay's inode (every call that changes an
         * inode takes write access to its mount first, which notes it). */
        if (BPF_CORE_READ(noted_sb, s_magic) == OVERLAYFS_SUPER_MAGIC)
            return 0;
        mnt = NULL;
    }
    return check_change_at(dentry, mnt, NULL, op, false, 0);
}

/* check_inode_change for notify_change's attributes (times, mode, owner,
 * size), but for the changes made on a file open for writing, which
 * file_open judged: ftruncate (ATTR_FILE) and the kernel clearing set-id bits
 * on a write (ATTR_FORCE, which no syscall passes). Those take no write
 * access to the mount first. */
static __always_inline int check_setattr(struct dentry *dentry, struct iattr *attr, int ret)
{
    unsigned int valid = BPF_CORE_READ(attr, ia_valid);
    bool kills_privileges = (valid & ATTR_FORCE) && (valid & (ATTR_KILL_SUID | ATTR_KILL_SGID | ATTR_KILL_PRIV));
    if (ret || (valid & ATTR_FILE) || kills_privileges)
        return ret;
    return check_inode_change(dentry, CERB_OP_SETATTR, ret);
}
