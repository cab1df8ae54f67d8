// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's reach into other processes (tests/vm/cases/policy_reach.sh).
 * "victim SECONDS" prints "pid=N addr=0x... fd=N", then watches a buffer of
 * its own for SECONDS and prints "overwritten" as soon as it no longer reads
 * "intact", "signalled" as soon as SIGIO or SIGURG came (or "intact" at the
 * end); it leads a process group of its own. The others act on such a victim, or on
 * the kernel's shared objects, and print "ok" or "errno=N (NAME)":
 * poke PID ADDR (process_vm_writev), ptrace-poke PID ADDR (PTRACE_ATTACH and
 * PTRACE_POKEDATA), proc-mem PID ADDR (a write to /proc/PID/mem),
 * getfd PID FD (pidfd_getfd), signal PID (SIGTERM), prlimit PID (its core
 * size limit set), renice PID, user-keyring (KEYCTL_DESCRIBE of the caller's
 * uid's user keyring, printed), userfaultfd. */
#define _GNU_SOURCE
#include "probe_net.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char watched[16] = "intact";
static volatile sig_atomic_t signalled;
static void note_signal(int sig) { signalled = sig; }

static int victim(int seconds)
{
    /* A process group of its own, for acts on a group; SIGIO and SIGURG (sent through a file's owner)
     * noted, SIGURG being ignored by default. */
    setpgid(0, 0);
    struct sigaction action = {.sa_handler = note_signal};
    sigaction(SIGIO, &action, NULL);
    sigaction(SIGURG, &action, NULL);
    int fd = open("/", O_RDONLY | O_DIRECTORY);
    printf("pid=%d addr=%p fd=%d\n", getpid(), (void*)watched, fd);
    fflush(stdout);
    for (int tick = 0; tick < seconds * 20; ++tick) {
        if (strcmp(watched, "intact") != 0) {
            printf("overwritten\n");
            return 0;
        }
        if (signalled) {
            printf("signalled\n");
            return 0;
        }
        usleep(50000);
    }
    printf("intact\n");
    return 0;
}

static void* address(const char* text) { return (void*)(uintptr_t)strtoull(text, NULL, 0); }

static int poke(pid_t pid, void* addr)
{
    static const char forged[8] = "forged";
    struct iovec local = {(void*)forged, sizeof forged}, remote = {addr, sizeof forged};
    return report(process_vm_writev(pid, &local, 1, &remote, 1, 0) < 0 ? -1 : 0);
}

static int ptrace_poke(pid_t pid, void* addr)
{
    if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
        return report(-1);
    waitpid(pid, NULL, __WALL);
    long word;
    memcpy(&word, "poked!!", sizeof word);
    int rc = (int)ptrace(PTRACE_POKEDATA, pid, addr, (void*)word);
    int err = errno;
    ptrace(PTRACE_DETACH, pid, NULL, NULL);
    errno = err;
    return report(rc);
}

static int proc_mem(pid_t pid, void* addr)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return report(-1);
    return report(pwrite(fd, "memwrit", 8, (off_t)(uintptr_t)addr) < 0 ? -1 : 0);
}

static int get_fd(pid_t pid, int fd)
{
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return report(-1);
    return report((int)syscall(SYS_pidfd_getfd, pidfd, fd, 0));
}

static int user_keyring(void)
{
    char description[256] = {0};
    long n = syscall(SYS_keyctl, KEYCTL_DESCRIBE, KEY_SPEC_USER_KEYRING, description, sizeof description - 1);
    if (n < 0)
        return report(-1);
    printf("%s\n", description);
    return 0;
}

int probe_reach(int argc, char** argv)
{
    const char* cmd = argv[1];
    pid_t pid = argc > 2 ? atoi(argv[2]) : 0;
    if (!strcmp(cmd, "victim") && argc > 2)
        return victim(atoi(argv[2]));
    if (!strcmp(cmd, "poke") && argc > 3)
        return poke(pid, address(argv[3]));
    if (!strcmp(cmd, "ptrace-poke") && argc > 3)
        return ptrace_poke(pid, address(argv[3]));
    if (!strcmp(cmd, "proc-mem") && argc > 3)
        return proc_mem(pid, address(argv[3]));
    if (!strcmp(cmd, "getfd") && argc > 3)
        return get_fd(pid, atoi(argv[3]));
    if (!strcmp(cmd, "signal") && argc > 2)
        return report(kill(pid, SIGTERM));
    if (!strcmp(cmd, "prlimit") && argc > 2) {
        struct rlimit none = {0, 0};
        return report(prlimit(pid, RLIMIT_CORE, &none, NULL));
    }
    if (!strcmp(cmd, "renice") && argc > 2)
        return report(setpriority(PRIO_PROCESS, pid, 5));
    if (!strcmp(cmd, "user-keyring"))
        return user_keyring();
    if (!strcmp(cmd, "userfaultfd"))
        return report((int)syscall(SYS_userfaultfd, O_CLOEXEC));
    return -1;
}
