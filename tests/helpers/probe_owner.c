// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's signals through a file's owner (tests/vm/cases/policy_reach.sh).
 * "owner-signal HOW PID" makes PID (a victim: its own process group) the owner of a file of the probe's
 * and makes I/O happen on it, so that the kernel signals the owner; it prints "ok" once the I/O is done
 * (whether the signal was delivered only the victim can tell) or the errno of the step that failed.
 * "owner-signal-child HOW" does the same to a child of its own and prints "ok" when the child got the
 * signal, "not delivered" when it did not. HOW:
 *   pipe       F_SETOWN, O_ASYNC on a pipe's read end, a write: SIGIO
 *   socket     the same on a unix stream socket: SIGIO
 *   oob        F_SETOWN on a unix stream socket, out-of-band data sent to it: SIGURG
 *   setown-ex  F_SETOWN_EX (F_OWNER_PID) and F_SETSIG SIGTERM on a pipe: SIGTERM
 *   group      F_SETOWN -PID (the process group) on a pipe: SIGIO
 *   group-ex   F_SETOWN_EX (F_OWNER_PGRP) on a pipe: SIGIO
 *   ioctl      FIOSETOWN and FIOASYNC on a unix stream socket: SIGIO
 * "owner-fill N HOW PID" first has child processes own about N eventfds (each as many as its RLIMIT_NOFILE
 * allows), stopping at the first ENOSPC or ENFILE, then does "owner-signal HOW PID": an owner the kernel
 * side could not remember must not be set at all. */
#define _GNU_SOURCE
#include "probe_net.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MSG_OOB
#define MSG_OOB 1
#endif

/* The two ends of a pipe or of a unix stream socket pair: [0] gets the owner, [1] is written. */
static int make_pair(const char* how, int ends[2])
{
    if (!strcmp(how, "socket") || !strcmp(how, "oob") || !strcmp(how, "ioctl"))
        return socketpair(AF_UNIX, SOCK_STREAM, 0, ends);
    return pipe(ends);
}

static int set_owner(const char* how, int fd, pid_t pid)
{
    if (!strcmp(how, "setown-ex") || !strcmp(how, "group-ex")) {
        struct f_owner_ex owner = {how[0] == 's' ? F_OWNER_PID : F_OWNER_PGRP, pid};
        if (fcntl(fd, F_SETOWN_EX, &owner) < 0)
            return -1;
        return how[0] == 's' ? fcntl(fd, F_SETSIG, SIGTERM) : 0;
    }
    if (!strcmp(how, "ioctl")) {
        int on = 1;
        return ioctl(fd, FIOSETOWN, &pid) < 0 ? -1 : ioctl(fd, FIOASYNC, &on);
    }
    return fcntl(fd, F_SETOWN, !strcmp(how, "group") ? -pid : pid);
}

/* The owner set to pid, then I/O that signals it; -1 with errno at the first step that failed. */
static int signal_through_owner(const char* how, pid_t pid)
{
    int ends[2];
    if (make_pair(how, ends) < 0 || set_owner(how, ends[0], pid) < 0)
        return -1;
    bool oob = !strcmp(how, "oob");
    if (!oob && strcmp(how, "ioctl") && fcntl(ends[0], F_SETFL, O_ASYNC) < 0)
        return -1;
    return (oob ? send(ends[1], "!", 1, MSG_OOB) : write(ends[1], "!", 1)) < 0 ? -1 : 0;
}

static volatile sig_atomic_t got_signal;
static void note_signal(int sig) { got_signal = sig; }

/* The child (its own process group before it says it is ready) waits up to two seconds for one of the
 * signals signal_through_owner sends, and exits 0 if it came. */
static int owner_signal_child(const char* how)
{
    int ready[2];
    if (pipe(ready) < 0)
        return report(-1);
    pid_t child = fork();
    if (child < 0)
        return report(-1);
    if (child == 0) {
        setpgid(0, 0);
        struct sigaction action = {.sa_handler = note_signal};
        sigaction(SIGIO, &action, NULL);
        sigaction(SIGURG, &action, NULL);
        sigaction(SIGTERM, &action, NULL);
        (void)!write(ready[1], "r", 1);
        for (int tick = 0; tick < 40 && !got_signal; ++tick)
            usleep(50000);
        _exit(got_signal ? 0 : 1);
    }
    char byte;
    if (read(ready[0], &byte, 1) != 1)
        return report(-1);
    int rc = signal_through_owner(how, child);
    int err = errno;
    int status = 0;
    waitpid(child, &status, 0);
    if (rc < 0) {
        errno = err;
        return report(-1);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("not delivered\n");
        return 1;
    }
    return report(0);
}

/* One holder: as many eventfds as its RLIMIT_NOFILE lets it open, each owned by itself, kept open until it
 * is killed. It writes the count it holds and the errno that stopped it to the pipe. */
static void hold_owned_files(int out)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
    int held[2] = {0, 0};
    for (;;) {
        int fd = eventfd(0, 0);
        if (fd < 0) {
            held[1] = errno;
            break;
        }
        if (fcntl(fd, F_SETOWN, getpid()) < 0) {
            held[1] = errno;
            break;
        }
        ++held[0];
    }
    (void)!write(out, held, sizeof held);
    for (;;)
        pause();
}

/* Processes holding owned files until n are held, one is refused with ENOSPC, or the system's file table is
 * full (ENFILE: nothing more can be filled). A process may hold only as many files as its RLIMIT_NOFILE
 * allows, and a user namespace cannot raise it. */
static void own_many(long n, pid_t holders[], int max_holders, int* count)
{
    int channel[2];
    if (pipe(channel) < 0)
        return;
    long owned = 0;
    int last_error = 0;
    for (*count = 0; owned < n && *count < max_holders && last_error != ENOSPC && last_error != ENFILE;) {
        pid_t holder = fork();
        if (holder == 0)
            hold_owned_files(channel[1]);
        if (holder < 0)
            break;
        holders[(*count)++] = holder;
        int held[2];
        if (read(channel[0], held, sizeof held) != sizeof held)
            break;
        owned += held[0];
        last_error = held[1];
    }
    fprintf(stderr, "owner-fill: %ld owned by %d processes, the last stopped by %s\n", owned, *count,
            strerror(last_error));
}

int probe_owner(int argc, char** argv)
{
    if (!strcmp(argv[1], "owner-fill") && argc > 4) {
        static pid_t holders[4096];
        int count = 0;
        own_many(atol(argv[2]), holders, 4096, &count);
        int rc = report(signal_through_owner(argv[3], atoi(argv[4])));
        for (int i = 0; i < count; ++i)
            kill(holders[i], SIGKILL);
        for (int i = 0; i < count; ++i)
            waitpid(holders[i], NULL, 0);
        return rc;
    }
    if (!strcmp(argv[1], "owner-signal") && argc > 3)
        return report(signal_through_owner(argv[2], atoi(argv[3])));
    if (!strcmp(argv[1], "owner-signal-child") && argc > 2)
        return owner_signal_child(argv[2]);
    return -1;
}
