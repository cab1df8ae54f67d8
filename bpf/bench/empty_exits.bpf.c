// SPDX-License-Identifier: GPL-2.0-only
/* Programs that return at once, on the system call tracepoints a call observer
 * could use: what attaching one costs every call before the program does any
 * work (bench/observer_floor.sh). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

/* Where the landlock backend's call observer is attached: every call's return. */
SEC("tp_btf/sys_exit")
int BPF_PROG(every_exit, struct pt_regs *regs, long ret)
{
    return 0;
}

/* One call's own tracepoint, for a call the loop never makes: the work flag
 * every task then carries, and nothing else. */
SEC("tracepoint/syscalls/sys_exit_getppid")
int unrelated_exit(void *ctx)
{
    return 0;
}

/* The loop's own call's tracepoint: observing only the calls that name paths. */
SEC("tracepoint/syscalls/sys_exit_openat")
int openat_exit(void *ctx)
{
    return 0;
}
