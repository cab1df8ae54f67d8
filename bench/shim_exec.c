// SPDX-License-Identifier: Apache-2.0
// What a command shim costs to start and make its call, per exec: CPU (user + system) and minor page
// faults from getrusage(RUSAGE_CHILDREN), and the wall time. Each SHIM is run N times as `git status`
// (posix_spawn, then wait) per round, the shims alternating within each round, against a stand-in broker
// on a thread of this process (so its CPU is not the children's): it answers every call "exited 0". It
// listens at the shim's path, /run/cerberus/broker/broker.sock, on a tmpfs over /run in a mount
// namespace of this process's own. Shims of builds before the binary wire (broker/broker_wire.h) sent
// JSON; a call starting with '{' is answered in JSON, so the two can be compared.
// usage: shim_exec N ROUNDS SHIM... (as root; bench/shim_exec.sh builds and runs it)
#define _GNU_SOURCE
#include "broker/broker_wire.h"

#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static void die(const char* what)
{
    perror(what);
    exit(1);
}

static void* answer_calls(void* listener)
{
    static char call[CERBERUS_WIRE_MAX_REQUEST_BYTES + 1];
    char control[CMSG_SPACE(3 * sizeof(int))];
    for (;;) {
        int connection = accept(*(int*)listener, NULL, NULL);
        struct iovec iov = {call, sizeof call};
        struct msghdr msg = {
            .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
        ssize_t n = recvmsg(connection, &msg, 0);
        for (struct cmsghdr* h = CMSG_FIRSTHDR(&msg); h; h = CMSG_NXTHDR(&msg, h))
            for (int* fd = (int*)CMSG_DATA(h); (char*)fd < (char*)h + h->cmsg_len; ++fd)
                close(*fd);
        if (n > 0 && call[0] == '{') {
            send(connection, "{\"status\":0}", 12, MSG_NOSIGNAL);
        } else {
            struct cerberus_wire_answer exited = {CERBERUS_WIRE_MAGIC, CERBERUS_WIRE_EXITED, 0, 0};
            send(connection, &exited, sizeof exited, MSG_NOSIGNAL);
        }
        close(connection);
    }
    return NULL;
}

static int listen_at_shim_path(void)
{
    if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
        mount("shim-bench", "/run", "tmpfs", 0, NULL) < 0)
        die("a mount namespace with a tmpfs at /run");
    mkdir("/run/cerberus", 0755);
    mkdir(CERBERUS_WIRE_SOCKET_DIR, 0755);
    struct sockaddr_un addr = {
        .sun_family = AF_UNIX, .sun_path = CERBERUS_WIRE_SOCKET_DIR "/" CERBERUS_WIRE_SOCKET_NAME};
    int listener = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (listener < 0 || bind(listener, (struct sockaddr*)&addr, sizeof addr) < 0 || listen(listener, 64) < 0)
        die("listening at " CERBERUS_WIRE_SOCKET_DIR "/" CERBERUS_WIRE_SOCKET_NAME);
    return listener;
}

static double microseconds(struct timeval t)
{
    return t.tv_sec * 1e6 + t.tv_usec;
}

int main(int argc, char** argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: shim_exec N ROUNDS SHIM...\n");
        return 2;
    }
    int execs = atoi(argv[1]), rounds = atoi(argv[2]);
    static int listener;
    listener = listen_at_shim_path();
    pthread_t broker;
    if (pthread_create(&broker, NULL, answer_calls, &listener) != 0)
        die("pthread_create");
    posix_spawn_file_actions_t quiet;
    posix_spawn_file_actions_init(&quiet);
    posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
    char* shim_argv[] = {"git", "status", NULL};
    for (int round = 1; round <= rounds; ++round)
        for (int s = 3; s < argc; ++s) {
            struct rusage before, after;
            struct timespec start, end;
            int failed = 0;
            getrusage(RUSAGE_CHILDREN, &before);
            clock_gettime(CLOCK_MONOTONIC, &start);
            for (int i = 0; i < execs; ++i) {
                pid_t pid;
                int status;
                if (posix_spawn(&pid, argv[s], &quiet, NULL, shim_argv, environ) != 0)
                    die(argv[s]);
                waitpid(pid, &status, 0);
                failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
            }
            clock_gettime(CLOCK_MONOTONIC, &end);
            getrusage(RUSAGE_CHILDREN, &after);
            double cpu = microseconds(after.ru_utime) - microseconds(before.ru_utime) +
                         microseconds(after.ru_stime) - microseconds(before.ru_stime);
            double wall = (end.tv_sec - start.tv_sec) * 1e6 + (end.tv_nsec - start.tv_nsec) / 1e3;
            printf("round %d %s: cpu %.0f us, %.1f minor faults, wall %.0f us an exec; %d of %d failed\n", round,
                   argv[s], cpu / execs, (double)(after.ru_minflt - before.ru_minflt) / execs, wall / execs, failed,
                   execs);
            fflush(stdout);
        }
    return 0;
}
