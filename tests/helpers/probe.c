// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe: a static helper run inside test containers. Each
 * subcommand performs one action and prints "ok" or "errno=N (NAME)", so
 * tests assert what the container really gets from the kernel. */
#define _GNU_SOURCE
#include "probe_net.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

int report(int rc)
{
    if (rc < 0) {
        printf("errno=%d (%s)\n", errno, strerrorname_np(errno) ? strerrorname_np(errno) : "?");
        return 1;
    }
    printf("ok\n");
    return 0;
}

/* Fills an IPv4 or IPv6 socket address from text. */
socklen_t make_addr(const char* host, int port, struct sockaddr_storage* ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in* in4 = (struct sockaddr_in*)ss;
    struct sockaddr_in6* in6 = (struct sockaddr_in6*)ss;
    if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
        in4->sin_family = AF_INET;
        in4->sin_port = htons(port);
        return sizeof *in4;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        return sizeof *in6;
    }
    fprintf(stderr, "bad address %s\n", host);
    exit(2);
}

static int net(int argc, char** argv, int send_only)
{
    if (argc < 5) {
        fprintf(stderr, "usage: %s tcp|udp HOST PORT\n", argv[1]);
        return 2;
    }
    struct sockaddr_storage ss;
    socklen_t len = make_addr(argv[3], atoi(argv[4]), &ss);
    int type = strcmp(argv[2], "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM;
    int fd = socket(ss.ss_family, type, 0);
    if (fd < 0)
        return report(-1);
    if (send_only)
        return report(sendto(fd, "x", 1, 0, (struct sockaddr*)&ss, len) < 0 ? -1 : 0);
    return report(connect(fd, (struct sockaddr*)&ss, len));
}

static int connect_unix(const char* path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0)
        return report(-1);
    return report(connect(fd, (struct sockaddr*)&addr, sizeof addr));
}

/* A stream socket listening at PATH (after printing "listening"), or -1. */
static int listen_at(const char* path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, path, sizeof addr.sun_path - 1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr*)&addr, sizeof addr) < 0 || listen(fd, 16) < 0)
        return -1;
    printf("listening\n");
    fflush(stdout);
    return fd;
}

/* Listens at PATH, then accepts and closes connections until killed. */
static int listen_unix(const char* path)
{
    int fd = listen_at(path);
    if (fd < 0)
        return report(-1);
    for (;;) {
        int client = accept(fd, NULL, NULL);
        if (client >= 0)
            close(client);
    }
}

/* Listens at PATH, then accepts connections and keeps every descriptor
 * they pass (a seccomp listener, say) open, unanswered, until killed. */
static int hold_fds(const char* path)
{
    int fd = listen_at(path);
    if (fd < 0)
        return report(-1);
    for (int held = 0;;) {
        int client = accept(fd, NULL, NULL);
        char byte;
        char control[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&byte, 1};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control,
                             .msg_controllen = sizeof control};
        if (client >= 0 && recvmsg(client, &msg, 0) > 0 && CMSG_FIRSTHDR(&msg))
            printf("held=%d\n", ++held);
        fflush(stdout);
    }
}

/* Attaches (PTRACE_SEIZE) to every process whose comm is NAME, as an agent
 * would to take over a runtime process in its container; "ok" when one
 * attach succeeded, else the error of the last; exit 3 when none is found. */
static int ptrace_comm(const char* name)
{
    DIR* proc = opendir("/proc");
    int found = 0, attached = 0, err = 0;
    for (struct dirent* e; proc && (e = readdir(proc));) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%s/comm", e->d_name);
        FILE* f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f))
            comm[strcspn(comm, "\n")] = 0;
        fclose(f);
        pid_t pid = atoi(e->d_name);
        if (pid <= 0 || pid == getpid() || strcmp(comm, name) != 0)
            continue;
        found++;
        if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0)
            attached++; /* detached when we exit */
        else
            err = errno;
    }
    if (!found) {
        printf("no process named %s\n", name);
        return 3;
    }
    if (attached)
        return report(0);
    errno = err;
    return report(-1);
}

/* The identity and capability lines of this process's /proc/self/status:
 * what a setuid binary really got. */
static int print_status(void)
{
    FILE* f = fopen("/proc/self/status", "r");
    if (!f)
        return report(-1);
    char line[256];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Uid:", 4) || !strncmp(line, "Cap", 3) || !strncmp(line, "NoNewPrivs:", 11))
            fputs(line, stdout);
    fclose(f);
    return 0;
}

/* Forks up to n children that sleep; prints how many forks succeeded. */
static int fork_many(int n)
{
    pid_t children[4096];
    int made = 0;
    for (int i = 0; i < n && i < 4096; ++i) {
        pid_t pid = fork();
        if (pid < 0)
            break;
        if (pid == 0) {
            pause();
            _exit(0);
        }
        children[made++] = pid;
    }
    printf("forked=%d\n", made);
    for (int i = 0; i < made; ++i) {
        kill(children[i], SIGKILL);
        waitpid(children[i], NULL, 0);
    }
    return 0;
}

/* Connects a UDP socket n times to HOST PORT (default 203.0.113.9 443) as
 * fast as it can; prints how many connects failed with EPERM (denials the
 * policy made) and how many ended otherwise. */
static int burst(int n, const char* host, int port)
{
    struct sockaddr_storage ss;
    socklen_t len = make_addr(host, port, &ss);
    int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
    if (fd < 0)
        return report(-1);
    int denied = 0, other = 0;
    for (int i = 0; i < n; ++i) {
        if (connect(fd, (struct sockaddr*)&ss, len) < 0 && errno == EPERM)
            denied++;
        else
            other++;
    }
    printf("denied=%d other=%d\n", denied, other);
    return 0;
}

/* Benchmark loops: each repeats one operation n times and prints
 * "ns_per_op=T failed=F last_error=NAME cpu_per_op_ns=C", so the policy's cost
 * on a syscall path can be compared inside and outside policed containers. T
 * is wall time; C the CPU time the loop took (its children's included), which
 * time spent waiting for a core on a shared host does not inflate. */
long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long cpu_ns(void)
{
    long long total = 0;
    struct rusage usage;
    int whose[] = {RUSAGE_SELF, RUSAGE_CHILDREN};
    for (int i = 0; i < 2; ++i)
        if (getrusage(whose[i], &usage) == 0)
            total += (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000000LL +
                     (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1000LL;
    return total;
}

struct loop_clock loop_start(void)
{
    struct loop_clock start = {.wall_ns = now_ns(), .cpu_ns = cpu_ns()};
    return start;
}

int loop_report(struct loop_clock start, int n, int failed, const char* last_error)
{
    long long ops = n > 0 ? n : 1;
    long long wall = now_ns() - start.wall_ns, cpu = cpu_ns() - start.cpu_ns;
    printf("ns_per_op=%lld failed=%d last_error=%s cpu_per_op_ns=%lld\n", wall / ops, failed,
           last_error ? last_error : "none", cpu / ops);
    return 0;
}

static const char* errno_name(int e) { return strerrorname_np(e) ? strerrorname_np(e) : "?"; }

/* open(O_RDONLY) + close of PATH, n times. */
int loop_open(int n, const char* path)
{
    int failed = 0;
    const char* last = NULL;
    struct loop_clock start = loop_start();
    for (int i = 0; i < n; ++i) {
        int fd = open(path, O_RDONLY);
        if (fd < 0) {
            failed++;
            last = errno_name(errno);
        } else {
            close(fd);
        }
    }
    return loop_report(start, n, failed, last);
}

/* socket + TCP connect + close to HOST PORT, n times; a refused port is
 * fine: the connect still passes the LSM hook before the stack refuses it. */
static int loop_connect(int n, const char* host, int port)
{
    struct sockaddr_storage ss;
    socklen_t len = make_addr(host, port, &ss);
    int failed = 0;
    const char* last = NULL;
    struct loop_clock start = loop_start();
    for (int i = 0; i < n; ++i) {
        int fd = socket(ss.ss_family, SOCK_STREAM, 0);
        if (fd < 0 || connect(fd, (struct sockaddr*)&ss, len) < 0) {
            failed++;
            last = errno_name(errno);
        }
        if (fd >= 0)
            close(fd);
    }
    return loop_report(start, n, failed, last);
}

/* fork + exec of argv + wait, n times; a non-zero exit counts as failed. */
static int loop_exec(int n, char** argv)
{
    int failed = 0;
    const char* last = NULL;
    struct loop_clock start = loop_start();
    for (int i = 0; i < n; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            execv(argv[0], argv);
            _exit(127);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0) {
            failed++;
            last = errno_name(errno);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed++;
            last = "exit-status";
        }
    }
    return loop_report(start, n, failed, last);
}

/* Copies a binary into a memfd and execs it from there. */
static int memfd_exec(const char* path, char** argv)
{
    int src = open(path, O_RDONLY);
    int mem = memfd_create("probe", 0);
    if (src < 0 || mem < 0)
        return report(-1);
    char buf[65536];
    ssize_t n;
    while ((n = read(src, buf, sizeof buf)) > 0)
        if (write(mem, buf, n) != n)
            return report(-1);
    char* envp[] = {NULL};
    syscall(SYS_execveat, mem, "", argv, envp, AT_EMPTY_PATH);
    return report(-1);
}

/* Reads the names in a directory (what ls does); prints how many. */
static int list_dir(const char* path)
{
    DIR* dir = opendir(path);
    if (!dir)
        return report(-1);
    int names = 0;
    errno = 0;
    while (readdir(dir))
        names++;
    int err = errno;
    closedir(dir);
    if (err) {
        errno = err;
        return report(-1);
    }
    printf("names=%d\n", names);
    return 0;
}

/* Opens path (relative) in a detached copy of the mount tree at dir. */
static int clone_read(const char* dir, const char* path)
{
    int tree = open_tree(AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (tree < 0)
        return report(-1);
    return report(openat(tree, path, O_RDONLY));
}

/* Creates name in a new tmpfs that fsmount gives detached, never attached anywhere. */
static int fsmount_write(const char* name)
{
    int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return report(-1);
    int mnt = fsmount(fs, FSMOUNT_CLOEXEC, 0);
    if (mnt < 0)
        return report(-1);
    return report(openat(mnt, name, O_WRONLY | O_CREAT, 0644));
}

/* Changes to an inode that open nothing for writing (docs/threat-model.md, class 2). */
static int change_inode(const char* how, const char* path, const char* name, const char* value)
{
    if (!strcmp(how, "utime"))
        return report(utimensat(AT_FDCWD, path, NULL, 0));
    if (!strcmp(how, "lsetxattr"))
        return report(lsetxattr(path, name, value, strlen(value), 0));
    if (!strcmp(how, "setxattr"))
        return report(setxattr(path, name, value, strlen(value), 0));
    if (!strcmp(how, "removexattr"))
        return report(removexattr(path, name));
    if (!strcmp(how, "acl")) { /* system.posix_acl_access: others may read and write */
        struct {
            uint32_t version;
            struct { uint16_t tag, perm; uint32_t id; } entries[3];
        } acl = {2, {{0x01, 6, ~0u}, {0x04, 4, ~0u}, {0x20, 6, ~0u}}};
        return report(setxattr(path, "system.posix_acl_access", &acl, sizeof acl, 0));
    }
    /* Through a descriptor: futimens and fsetxattr on a read-only open, or
     * utimensat(AT_EMPTY_PATH) on an O_PATH one, which opening a file the
     * agent may not read leaves it. */
    int fd = open(path, !strcmp(how, "utime-opath") ? O_PATH : O_RDONLY);
    if (fd < 0)
        return report(fd);
    if (!strcmp(how, "futimens"))
        return report(futimens(fd, NULL));
    if (!strcmp(how, "utime-opath"))
        return report(utimensat(fd, "", NULL, AT_EMPTY_PATH));
    if (!strcmp(how, "fsetxattr"))
        return report(fsetxattr(fd, name, value, strlen(value), 0));
    if (!strcmp(how, "mprotect-exec")) { /* mapped readable, then made executable */
        void* map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED)
            return report(-1);
        return report(mprotect(map, 4096, PROT_READ | PROT_EXEC));
    }
    fprintf(stderr, "unknown inode change %s\n", how);
    return 2;
}

static int run(int argc, char** argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: cerberus-probe [hold SECONDS] COMMAND ARGS\n");
        return 2;
    }
    const char* cmd = argv[1];
    if (!strcmp(cmd, "connect"))
        return net(argc, argv, 0);
    if (!strcmp(cmd, "sendto"))
        return net(argc, argv, 1);
    if (!strcmp(cmd, "connect-unix") && argc > 2)
        return connect_unix(argv[2]);
    if (!strcmp(cmd, "listen-unix") && argc > 2)
        return listen_unix(argv[2]);
    if (!strcmp(cmd, "hold-fds") && argc > 2)
        return hold_fds(argv[2]);
    if (!strcmp(cmd, "ptrace-comm") && argc > 2)
        return ptrace_comm(argv[2]);
    if (!strcmp(cmd, "read") && argc > 2)
        return report(open(argv[2], O_RDONLY));
    if (!strcmp(cmd, "clone-read") && argc > 3)
        return clone_read(argv[2], argv[3]);
    if (!strcmp(cmd, "fsmount-write") && argc > 2)
        return fsmount_write(argv[2]);
    if (!strcmp(cmd, "chroot") && argc > 3) { /* chroot DIR COMMAND ARGS: the command run in the new root */
        if (chroot(argv[2]) < 0 || chdir("/") < 0)
            return report(-1);
        return run(argc - 2, argv + 2);
    }
    if (!strcmp(cmd, "list") && argc > 2)
        return list_dir(argv[2]);
    if (!strcmp(cmd, "write") && argc > 2)
        return report(open(argv[2], O_WRONLY | O_CREAT, 0644));
    if (!strcmp(cmd, "exec") && argc > 2) {
        execv(argv[2], argv + 2);
        return report(-1);
    }
    if (!strcmp(cmd, "memfd-exec") && argc > 2)
        return memfd_exec(argv[2], argv + 2);
    if (!strcmp(cmd, "mkdir") && argc > 2)
        return report(mkdir(argv[2], 0755));
    if (!strcmp(cmd, "chown") && argc > 4)
        return report(chown(argv[2], atoi(argv[3]), atoi(argv[4])));
    if (!strcmp(cmd, "inode") && argc > 3)
        return change_inode(argv[2], argv[3], argc > 4 ? argv[4] : "", argc > 5 ? argv[5] : "");
    if (!strcmp(cmd, "status"))
        return print_status();
    if (!strcmp(cmd, "raw-socket"))
        return report(socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
    if (!strcmp(cmd, "unshare-user"))
        return report(unshare(CLONE_NEWUSER));
    if (!strcmp(cmd, "bpf")) {
        union bpf_attr attr = {.map_type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 1};
        return report(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr));
    }
    if (!strcmp(cmd, "perf")) { /* a software counter on itself: what perf_event_open guards least */
        struct perf_event_attr attr = {.type = PERF_TYPE_SOFTWARE, .size = sizeof attr,
                                       .config = PERF_COUNT_SW_TASK_CLOCK, .disabled = 1, .exclude_kernel = 1};
        return report(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    }
    if (!strcmp(cmd, "burst") && argc > 2)
        return burst(atoi(argv[2]), argc > 4 ? argv[3] : "203.0.113.9", argc > 4 ? atoi(argv[4]) : 443);
    if (!strcmp(cmd, "fork") && argc > 2)
        return fork_many(atoi(argv[2]));
    if (!strcmp(cmd, "loop-open") && argc > 3)
        return loop_open(atoi(argv[2]), argv[3]);
    if (!strcmp(cmd, "loop-connect") && argc > 4)
        return loop_connect(atoi(argv[2]), argv[3], atoi(argv[4]));
    if (!strcmp(cmd, "loop-exec") && argc > 3)
        return loop_exec(atoi(argv[2]), argv + 3);
    if (!strcmp(cmd, "ids")) {
        gid_t groups[64];
        int n = getgroups(64, groups);
        printf("uid=%d gid=%d groups=", getuid(), getgid());
        for (int i = 0; i < n; ++i)
            printf("%s%d", i ? "," : "", groups[i]);
        printf("\n");
        return 0;
    }
    if (!strcmp(cmd, "fds")) { /* open descriptors beyond stdio */
        int count = 0;
        for (int fd = 3; fd < 1024; ++fd)
            if (fcntl(fd, F_GETFD) >= 0)
                printf("%sfd%d", count++ ? " " : "", fd);
        printf("%sfds=%d\n", count ? " " : "", count);
        return 0;
    }
    int rc = probe_net(argc, argv);
    if (rc < 0)
        rc = probe_dns(argc, argv);
    if (rc < 0)
        rc = probe_abi(argc, argv);
    if (rc < 0)
        rc = probe_place(argc, argv);
    if (rc < 0)
        rc = probe_landlock(argc, argv);
    if (rc < 0)
        rc = probe_reach(argc, argv);
    if (rc < 0)
        rc = probe_owner(argc, argv);
    if (rc < 0)
        rc = probe_device(argc, argv);
    if (rc >= 0)
        return rc;
    fprintf(stderr, "unknown command %s\n", cmd);
    return 2;
}

/* "hold SECONDS COMMAND ARGS": the command, then a pause before exiting, so
 * that observers can still look at the process (/proc/<pid>/exe). */
int main(int argc, char** argv)
{
    if (argc > 3 && !strcmp(argv[1], "hold")) {
        int rc = run(argc - 2, argv + 2);
        fflush(stdout);
        sleep(atoi(argv[2]));
        return rc;
    }
    return run(argc, argv);
}
