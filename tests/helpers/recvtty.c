// SPDX-License-Identifier: Apache-2.0
/* cerberus-recvtty SOCKET: accepts one connection on a unix socket, receives
 * the pty master a runtime sends with --console-socket, and copies what the
 * container writes to its terminal to stdout until the terminal closes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int receive_fd(int conn)
{
    char name[256], control[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {name, sizeof name};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    if (recvmsg(conn, &msg, 0) < 0)
        return -1;
    struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    if (!cmsg || cmsg->cmsg_type != SCM_RIGHTS)
        return -1;
    int fd;
    memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
    return fd;
}

int main(int argc, char** argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cerberus-recvtty SOCKET\n");
        return 2;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strncpy(addr.sun_path, argv[1], sizeof addr.sun_path - 1);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    unlink(argv[1]);
    if (sock < 0 || bind(sock, (struct sockaddr*)&addr, sizeof addr) < 0 || listen(sock, 1) < 0) {
        perror("recvtty: listen");
        return 1;
    }
    int conn = accept(sock, NULL, NULL);
    int master = conn < 0 ? -1 : receive_fd(conn);
    if (master < 0) {
        perror("recvtty: receive the terminal");
        return 1;
    }
    char buf[4096];
    ssize_t n;
    /* EIO: the last process holding the terminal's slave side has exited. */
    while ((n = read(master, buf, sizeof buf)) > 0)
        fwrite(buf, 1, n, stdout);
    return n < 0 && errno != EIO;
}
