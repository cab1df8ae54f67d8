/* SPDX-License-Identifier: GPL-2.0-only OR Apache-2.0 */
/* The system calls the call observer (cerberus_observe.bpf.c) takes at their
 * return when they fail, with where each names its objects, for the
 * observer and for the collector that judges them (policy/observed_calls).
 * x86-64 numbers; a unit test holds them to the C library's __NR_ values.
 *
 * X(name, number, dir0, path0, dir1, path1): up to two names, each a path
 * argument (its index, or CERB_ARG_NONE: the call names a file descriptor
 * only) and the directory a relative path starts from (the index of a
 * directory fd argument, CERB_ARG_CWD, or CERB_ARG_NONE); for an fd-only
 * call dir is the index of the fd argument. */
#ifndef CERBERUS_CALLS_H
#define CERBERUS_CALLS_H

#define CERB_ARG_CWD (-1)
#define CERB_ARG_NONE (-2)
#define CERB_AT_FDCWD (-100)

#define CERB_CALLS(X)                                   \
    X(open, 2, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)        \
    X(creat, 85, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)      \
    X(openat, 257, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)               \
    X(openat2, 437, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)              \
    X(execve, 59, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)     \
    X(execveat, 322, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)             \
    X(mkdir, 83, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)      \
    X(mkdirat, 258, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)              \
    X(mknod, 133, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)     \
    X(mknodat, 259, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)              \
    X(rmdir, 84, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)      \
    X(unlink, 87, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)     \
    X(unlinkat, 263, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)             \
    X(rename, 82, CERB_ARG_CWD, 0, CERB_ARG_CWD, 1)                  \
    X(renameat, 264, 0, 1, 2, 3)                                     \
    X(renameat2, 316, 0, 1, 2, 3)                                    \
    X(link, 86, CERB_ARG_CWD, 0, CERB_ARG_CWD, 1)                    \
    X(linkat, 265, 0, 1, 2, 3)                                       \
    X(symlink, 88, CERB_ARG_CWD, 1, CERB_ARG_NONE, CERB_ARG_NONE)    \
    X(symlinkat, 266, 1, 2, CERB_ARG_NONE, CERB_ARG_NONE)            \
    X(truncate, 76, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)   \
    X(ftruncate, 77, 0, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(chmod, 90, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)      \
    X(fchmod, 91, 0, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE)    \
    X(fchmodat, 268, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)             \
    X(fchmodat2, 452, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)            \
    X(chown, 92, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)      \
    X(fchown, 93, 0, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE)    \
    X(lchown, 94, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)     \
    X(fchownat, 260, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)             \
    X(utime, 132, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)     \
    X(utimes, 235, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)    \
    X(utimensat, 280, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)            \
    X(futimesat, 261, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)            \
    X(setxattr, 188, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)  \
    X(lsetxattr, 189, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(fsetxattr, 190, 0, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(removexattr, 197, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(lremovexattr, 198, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(fremovexattr, 199, 0, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(setxattrat, 463, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)           \
    X(removexattrat, 466, 0, 1, CERB_ARG_NONE, CERB_ARG_NONE)        \
    X(ioctl, 16, 0, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE)     \
    X(mmap, 9, 4, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE)       \
    X(mount, 165, CERB_ARG_CWD, 1, CERB_ARG_NONE, CERB_ARG_NONE)     \
    X(umount2, 166, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE)   \
    X(pivot_root, 155, CERB_ARG_CWD, 0, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(move_mount, 429, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(fsopen, 430, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(fsmount, 432, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(open_tree, 428, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(bpf, 321, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(perf_event_open, 298, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(init_module, 175, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(finit_module, 313, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(delete_module, 176, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(kexec_load, 246, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(kexec_file_load, 320, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(unshare, 272, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(clone, 56, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(setns, 308, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(socket, 41, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(io_uring_setup, 425, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(setsockopt, 54, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE) \
    X(memfd_create, 319, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE, CERB_ARG_NONE)

/* openat2: the observer puts the open_how's flags in args[2] (the call passed a pointer there). */
#define CERB_NR_OPENAT2 437
#define CERB_NR_EXECVE 59
#define CERB_NR_EXECVEAT 322

#endif
