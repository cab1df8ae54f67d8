// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's datagrams sent out a device the agent names
 * (tests/vm/cases/policy_device.sh): to an address, but through the loopback
 * device, where the packet is delivered to a local socket instead, whatever
 * address it carries. "send-via HOW HOST PORT" sends one UDP datagram (HOW:
 * pktinfo, a cmsg naming lo and a loopback source; bindtodevice,
 * bindtoifindex, unicast-if, socket options; connected-pktinfo, on a socket
 * connected to the address first; tcp-bindtodevice, a TCP connect through
 * lo) and prints "ok" or "errno=N (NAME)". "udp-listen HOST PORT SECONDS"
 * binds HOST:PORT (IP_FREEBIND: the address need not be local), prints
 * "listening", then "received" for the first datagram or "nothing". */
#define _GNU_SOURCE
#include "probe_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62
#endif
#ifndef IPV6_FREEBIND
#define IPV6_FREEBIND 78
#endif

#define LOOPBACK_IFINDEX 1

/* A datagram with a cmsg naming the loopback device (and a loopback source). */
static ssize_t send_pktinfo(int fd, const struct sockaddr_storage* to, socklen_t len)
{
    char control[CMSG_SPACE(sizeof(struct in6_pktinfo))] = {0};
    struct iovec iov = {"x", 1};
    struct msghdr msg = {.msg_name = (void*)to, .msg_namelen = len, .msg_iov = &iov, .msg_iovlen = 1,
                         .msg_control = control};
    struct cmsghdr* cmsg = (struct cmsghdr*)control;
    if (to->ss_family == AF_INET) {
        struct in_pktinfo info = {.ipi_ifindex = LOOPBACK_IFINDEX};
        info.ipi_spec_dst.s_addr = htonl(INADDR_LOOPBACK);
        cmsg->cmsg_level = IPPROTO_IP;
        cmsg->cmsg_type = IP_PKTINFO;
        cmsg->cmsg_len = CMSG_LEN(sizeof info);
        memcpy(CMSG_DATA(cmsg), &info, sizeof info);
        msg.msg_controllen = CMSG_SPACE(sizeof info);
    } else {
        struct in6_pktinfo info = {.ipi6_addr = IN6ADDR_LOOPBACK_INIT, .ipi6_ifindex = LOOPBACK_IFINDEX};
        cmsg->cmsg_level = IPPROTO_IPV6;
        cmsg->cmsg_type = IPV6_PKTINFO;
        cmsg->cmsg_len = CMSG_LEN(sizeof info);
        memcpy(CMSG_DATA(cmsg), &info, sizeof info);
        msg.msg_controllen = CMSG_SPACE(sizeof info);
    }
    return sendmsg(fd, &msg, 0);
}

/* Binds the socket to the loopback device by the option HOW names; 0, or -1 with errno. */
static int bind_loopback(int fd, int family, const char* how)
{
    if (!strcmp(how, "bindtodevice") || !strcmp(how, "tcp-bindtodevice"))
        return setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3);
    if (!strcmp(how, "bindtoifindex")) {
        int index = LOOPBACK_IFINDEX;
        return setsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &index, sizeof index);
    }
    if (!strcmp(how, "unicast-if")) {
        if (family == AF_INET) {
            int index = (int)htonl(LOOPBACK_IFINDEX); /* IPv4 takes it in network order */
            return setsockopt(fd, IPPROTO_IP, IP_UNICAST_IF, &index, sizeof index);
        }
        int index = LOOPBACK_IFINDEX;
        return setsockopt(fd, IPPROTO_IPV6, IPV6_UNICAST_IF, &index, sizeof index);
    }
    return 0;
}

static int send_via(const char* how, const char* host, int port)
{
    struct sockaddr_storage to;
    socklen_t len = make_addr(host, port, &to);
    int tcp = !strcmp(how, "tcp-bindtodevice");
    int fd = socket(to.ss_family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (fd < 0 || bind_loopback(fd, to.ss_family, how) < 0)
        return report(-1);
    if (tcp) {
        fcntl(fd, F_SETFL, O_NONBLOCK);
        if (connect(fd, (struct sockaddr*)&to, len) < 0 && errno != EINPROGRESS)
            return report(-1);
        struct pollfd ready = {fd, POLLOUT, 0};
        if (poll(&ready, 1, 1000) <= 0) {
            printf("no answer\n");
            return 1;
        }
        int err = 0;
        socklen_t size = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &size);
        errno = err;
        return report(err ? -1 : 0);
    }
    if (!strcmp(how, "connected-pktinfo") && connect(fd, (struct sockaddr*)&to, len) < 0)
        return report(-1);
    if (!strcmp(how, "pktinfo") || !strcmp(how, "connected-pktinfo"))
        return report(send_pktinfo(fd, &to, len) < 0 ? -1 : 0);
    return report(sendto(fd, "x", 1, 0, (struct sockaddr*)&to, len) < 0 ? -1 : 0);
}

static int udp_listen(const char* host, int port, int seconds)
{
    struct sockaddr_storage at;
    socklen_t len = make_addr(host, port, &at);
    int fd = socket(at.ss_family, SOCK_DGRAM, 0);
    int on = 1;
    if (fd < 0)
        return report(-1);
    if (at.ss_family == AF_INET)
        setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &on, sizeof on);
    else
        setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &on, sizeof on);
    if (bind(fd, (struct sockaddr*)&at, len) < 0)
        return report(-1);
    printf("listening\n");
    fflush(stdout);
    struct pollfd ready = {fd, POLLIN, 0};
    char byte;
    if (poll(&ready, 1, seconds * 1000) > 0 && recv(fd, &byte, 1, 0) == 1)
        printf("received\n");
    else
        printf("nothing\n");
    return 0;
}

int probe_device(int argc, char** argv)
{
    if (argc > 4 && !strcmp(argv[1], "send-via"))
        return send_via(argv[2], argv[3], atoi(argv[4]));
    if (argc > 4 && !strcmp(argv[1], "udp-listen"))
        return udp_listen(argv[2], atoi(argv[3]), atoi(argv[4]));
    return -1;
}
