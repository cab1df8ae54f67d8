// SPDX-License-Identifier: Apache-2.0
/* cerberus-pause: the process of a test pod's sandbox container, standing in
 * for the pause image's /pause (no registry here). It holds the pod's
 * namespaces: sleeps until SIGTERM or SIGINT, and reaps the children a shared
 * pid namespace hands it. Static, so the image needs nothing else. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void leave(int sig)
{
    (void)sig;
    _exit(0);
}

static void reap(int sig)
{
    (void)sig;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void)
{
    if (getpid() != 1)
        fprintf(stderr, "cerberus-pause: not pid 1 of its namespace\n");
    struct sigaction stop = {.sa_handler = leave}, child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};
    if (sigaction(SIGTERM, &stop, NULL) < 0 || sigaction(SIGINT, &stop, NULL) < 0 ||
        sigaction(SIGCHLD, &child, NULL) < 0)
        return 1;
    for (;;)
        pause();
}
