// SPDX-License-Identifier: Apache-2.0
// The floor: what running /bin/true in a container costs with no runtime logic
// at all. The same namespaces as the benchmark's config.json, a private
// bind-mounted rootfs entered with pivot_root, a fresh /proc, exec, wait.
// No config parsing, no cgroups, no state, no error recovery.
// usage: floor ROOTFS [PROGRAM]
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char* what)
{
    perror(what);
    _exit(127);
}

static void enter_and_exec(const char* rootfs, const char* program)
{
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
        die("make / private");
    if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) != 0)
        die("bind rootfs");
    if (chdir(rootfs) != 0)
        die("chdir rootfs");
    if (syscall(SYS_pivot_root, ".", ".") != 0)
        die("pivot_root");
    if (umount2(".", MNT_DETACH) != 0)
        die("detach old root");
    if (chdir("/") != 0)
        die("chdir /");
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0)
        die("mount /proc");
    char* argv[] = {(char*)program, NULL};
    char* envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
    execve(program, argv, envp);
    die("execve");
}

int main(int argc, char** argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: floor ROOTFS [PROGRAM]\n");
        return 2;
    }
    const char* program = argc == 3 ? argv[2] : "/bin/true";
    int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
    pid_t pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
    if (pid < 0)
        die("clone");
    if (pid == 0)
        enter_and_exec(argv[1], program);
    int status;
    if (waitpid(pid, &status, 0) != pid)
        die("waitpid");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
