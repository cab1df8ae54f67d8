// SPDX-License-Identifier: Apache-2.0
/* cerberus-audit-switch: what the Landlock trail test needs of kernel audit,
 * without an audit daemon or auditctl on the host.
 *   get      prints audit_enabled (0, 1 or 2)
 *   set N    sets it (the test puts back what it found)
 * Exits 0 on success, 1 with the kernel's error on stderr. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int talk(int fd, int type, const void *payload, size_t size, struct audit_status *status)
{
    char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
    struct nlmsghdr *request = (struct nlmsghdr *)buf;
    memset(buf, 0, sizeof(buf));
    request->nlmsg_len = NLMSG_LENGTH(size);
    request->nlmsg_type = type;
    request->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
    request->nlmsg_seq = 1;
    memcpy(NLMSG_DATA(request), payload, size);
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, buf, request->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
        return -errno;
    /* The kernel acknowledges at once but sends AUDIT_GET's answer from a thread it starts for it:
     * the answer may come after the acknowledgement. */
    int acked = 0, answered = status == NULL;
    while (!acked || !answered) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0)
            return -errno;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == AUDIT_GET && status) {
                memcpy(status, NLMSG_DATA(h), sizeof(*status));
                answered = 1;
            }
            if (h->nlmsg_type == NLMSG_ERROR) {
                int error = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
                if (error)
                    return error;
                acked = 1;
            }
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
    int err = fd < 0 ? -errno : 0;
    if (!err && argc == 2 && strcmp(argv[1], "get") == 0) {
        struct audit_status status = {0};
        err = talk(fd, AUDIT_GET, NULL, 0, &status);
        if (!err)
            printf("%u\n", status.enabled);
    } else if (!err && argc == 3 && strcmp(argv[1], "set") == 0) {
        struct audit_status status = {.mask = AUDIT_STATUS_ENABLED, .enabled = (unsigned)atoi(argv[2])};
        err = talk(fd, AUDIT_SET, &status, sizeof(status), NULL);
    } else if (!err) {
        fprintf(stderr, "usage: %s get | set N\n", argv[0]);
        return 2;
    }
    if (err) {
        fprintf(stderr, "%s: %s\n", argv[0], strerror(-err));
        return 1;
    }
    return 0;
}
