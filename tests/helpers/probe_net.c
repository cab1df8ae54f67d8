// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's ways of sending a packet elsewhere than to the address
 * the policy checks (tests/vm/cases/policy_reroute.sh): an unspecified
 * address family, IPv6 routing headers and IPv4 source routes set by socket
 * option or by cmsg, protocols other than TCP and UDP, and the loopback
 * traffic that must keep working; binding, and the UDP exchanges that show
 * DNS queries steered to the gate (tests/integration/policy_dns_kernel.bats).
 * Each prints "ok" or "errno=N (NAME)" unless said otherwise. */
#define _GNU_SOURCE
#include "probe_net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* make_addr (probe.c) for an address known to be IPv4, or IPv6. */
static struct sockaddr_in address4(const char* host, int port)
{
    struct sockaddr_storage ss;
    make_addr(host, port, &ss);
    return *(struct sockaddr_in*)&ss;
}

static struct sockaddr_in6 address6(const char* host, int port)
{
    struct sockaddr_storage ss;
    make_addr(host, port, &ss);
    return *(struct sockaddr_in6*)&ss;
}

/* A UDP datagram to an IPv4 address whose family field says AF_UNSPEC, which
 * udp_sendmsg reads as AF_INET; with sendmmsg when batch is set. */
static int send_unspec(const char* host, int port, int batch)
{
    struct sockaddr_in sin = address4(host, port);
    sin.sin_family = AF_UNSPEC;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return report(-1);
    if (!batch)
        return report(sendto(fd, "x", 1, 0, (struct sockaddr*)&sin, sizeof sin) < 0 ? -1 : 0);
    struct iovec iov = {.iov_base = "x", .iov_len = 1};
    struct mmsghdr message = {.msg_hdr = {.msg_name = &sin, .msg_namelen = sizeof sin, .msg_iov = &iov, .msg_iovlen = 1}};
    int sent = sendmmsg(fd, &message, 1, 0);
    return report(sent < 0 ? -1 : 0);
}

/* An IPv6 routing header sending the packet to hop first: type 2 (RFC
 * 6275, Mobile IPv6) with kind "6", or a segment routing header (type 4, RFC
 * 8754) with kind "6sr", whose first segment is hop and last the address
 * named. The socket option and the cmsg take the same bytes. Returns its
 * length. */
#define ROUTING_HEADER_MAX 40

static int routing_header(const char* kind, const char* hop, unsigned char header[ROUTING_HEADER_MAX])
{
    struct in6_addr first = address6(hop, 0).sin6_addr;
    memset(header, 0, ROUTING_HEADER_MAX);
    if (strcmp(kind, "6sr") != 0) {
        header[1] = 2; /* length in 8 bytes beyond the first 8 */
        header[2] = 2; /* type */
        header[3] = 1; /* segments left */
        memcpy(header + 8, &first, 16);
        return 24;
    }
    header[1] = 4; /* two segments */
    header[2] = 4; /* type */
    header[3] = 1; /* segments left: the packet goes to segment 1 first */
    header[4] = 1; /* index of the first segment */
    memcpy(header + 24, &first, 16); /* segment 1; segment 0, the last, is filled with the destination */
    return 40;
}

/* A loose source route (IPv4 option LSRR) through hop, padded to 8 bytes. */
static void source_route(const char* hop, unsigned char option[8])
{
    struct in_addr first = address4(hop, 0).sin_addr;
    option[0] = 1; /* NOP */
    option[1] = 131; /* LSRR */
    option[2] = 7; /* its length: one address */
    option[3] = 4; /* pointer to that address */
    memcpy(option + 4, &first, 4);
}

static int set_route_option(const char* kind, const char* hop)
{
    int v6 = kind[0] == '6';
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return report(-1);
    if (v6) {
        unsigned char header[ROUTING_HEADER_MAX];
        int length = routing_header(kind, hop, header);
        return report(setsockopt(fd, IPPROTO_IPV6, IPV6_RTHDR, header, length));
    }
    unsigned char option[8];
    source_route(hop, option);
    return report(setsockopt(fd, IPPROTO_IP, IP_OPTIONS, option, sizeof option));
}

/* A datagram to host:port (what the policy checks) carrying, as a cmsg, a
 * route through hop (where the packet goes first). */
static int send_routed(const char* kind, const char* host, int port, const char* hop)
{
    int v6 = kind[0] == '6';
    union {
        struct cmsghdr align;
        char bytes[CMSG_SPACE(ROUTING_HEADER_MAX)];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {.iov_base = "x", .iov_len = 1};
    struct msghdr message = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.bytes};
    struct cmsghdr* cmsg = (struct cmsghdr*)control.bytes;
    struct sockaddr_in sin;
    struct sockaddr_in6 sin6;
    if (v6) {
        sin6 = address6(host, port);
        message.msg_name = &sin6;
        message.msg_namelen = sizeof sin6;
        unsigned char header[ROUTING_HEADER_MAX];
        int length = routing_header(kind, hop, header);
        if (length == 40)
            memcpy(header + 8, &sin6.sin6_addr, 16);
        *cmsg = (struct cmsghdr){.cmsg_len = CMSG_LEN(length), .cmsg_level = IPPROTO_IPV6, .cmsg_type = IPV6_RTHDR};
        memcpy(CMSG_DATA(cmsg), header, length);
        message.msg_controllen = CMSG_SPACE(length);
    } else {
        sin = address4(host, port);
        message.msg_name = &sin;
        message.msg_namelen = sizeof sin;
        unsigned char option[8];
        source_route(hop, option);
        *cmsg = (struct cmsghdr){.cmsg_len = CMSG_LEN(sizeof option), .cmsg_level = IPPROTO_IP, .cmsg_type = IP_RETOPTS};
        memcpy(CMSG_DATA(cmsg), option, sizeof option);
        message.msg_controllen = CMSG_SPACE(sizeof option);
    }
    int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return report(-1);
    return report(sendmsg(fd, &message, 0) < 0 ? -1 : 0);
}

/* TCP both ways through the container's own loopback (a connection made and
 * one accepted: the accepted side's packets are replies to an inbound
 * connection), then a connected UDP datagram. */
static int loopback_traffic(const char* host)
{
    int v6 = strchr(host, ':') != NULL;
    struct sockaddr_in sin = {0};
    struct sockaddr_in6 sin6 = {0};
    struct sockaddr* address = v6 ? (struct sockaddr*)&sin6 : (struct sockaddr*)&sin;
    socklen_t length = v6 ? sizeof sin6 : sizeof sin;
    if (v6)
        sin6 = address6(host, 0);
    else
        sin = address4(host, 0);
    int family = v6 ? AF_INET6 : AF_INET;
    int listener = socket(family, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, address, length) < 0 || listen(listener, 1) < 0 ||
        getsockname(listener, address, &length) < 0)
        return report(-1);
    int client = socket(family, SOCK_STREAM, 0);
    if (client < 0 || connect(client, address, length) < 0)
        return report(-1);
    int server = accept(listener, NULL, NULL);
    char byte;
    if (server < 0 || write(client, "q", 1) != 1 || read(server, &byte, 1) != 1 || write(server, "r", 1) != 1 ||
        read(client, &byte, 1) != 1 || byte != 'r')
        return report(-1);
    int receiver = socket(family, SOCK_DGRAM, 0);
    int sender = socket(family, SOCK_DGRAM, 0);
    length = v6 ? sizeof sin6 : sizeof sin;
    if (receiver < 0 || sender < 0 || bind(receiver, address, length) < 0 ||
        getsockname(receiver, address, &length) < 0 || connect(sender, address, length) < 0 ||
        send(sender, "d", 1, 0) != 1 || recv(receiver, &byte, 1, 0) != 1)
        return report(-1);
    return report(0);
}

/* Binds a TCP or UDP socket to HOST:PORT (the DNS port under host names). */
static int bind_to(const char* type, const char* host, int port)
{
    struct sockaddr_storage ss;
    socklen_t length = make_addr(host, port, &ss);
    int fd = socket(ss.ss_family, strcmp(type, "udp") == 0 ? SOCK_DGRAM : SOCK_STREAM, 0);
    if (fd < 0)
        return report(-1);
    return report(bind(fd, (struct sockaddr*)&ss, length));
}

/* A UDP datagram to HOST:PORT, by connect and send ("connect") or by sendto,
 * then one reply awaited for a second: prints where the reply came from
 * ("from=ADDR:PORT"), or the errno of the first step that failed (EPERM from
 * the policy; ECONNREFUSED on a connected socket when nothing listens where
 * the datagram went; EAGAIN when nothing answered). */
static int udp_exchange(const char* host, int port, const char* how)
{
    struct sockaddr_storage ss, from;
    socklen_t length = make_addr(host, port, &ss);
    socklen_t from_length = sizeof from;
    int fd = socket(ss.ss_family, SOCK_DGRAM, 0);
    struct timeval second = {.tv_sec = 1};
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &second, sizeof second) < 0)
        return report(-1);
    if (!strcmp(how, "connect")) {
        if (connect(fd, (struct sockaddr*)&ss, length) < 0 || send(fd, "q", 1, 0) < 0)
            return report(-1);
    } else if (sendto(fd, "q", 1, 0, (struct sockaddr*)&ss, length) < 0) {
        return report(-1);
    }
    char reply[64];
    if (recvfrom(fd, reply, sizeof reply, 0, (struct sockaddr*)&from, &from_length) < 0)
        return report(-1);
    char text[INET6_ADDRSTRLEN] = "?";
    int from_port = 0;
    if (from.ss_family == AF_INET) {
        inet_ntop(AF_INET, &((struct sockaddr_in*)&from)->sin_addr, text, sizeof text);
        from_port = ntohs(((struct sockaddr_in*)&from)->sin_port);
    } else if (from.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((struct sockaddr_in6*)&from)->sin6_addr, text, sizeof text);
        from_port = ntohs(((struct sockaddr_in6*)&from)->sin6_port);
    }
    printf("from=%s:%d\n", text, from_port);
    return 0;
}

int family_of(const char* name)
{
    if (!strcmp(name, "netlink"))
        return AF_NETLINK;
    if (!strcmp(name, "packet"))
        return AF_PACKET;
    return !strcmp(name, "inet6") ? AF_INET6 : AF_INET;
}

static int type_of(const char* name)
{
    if (!strcmp(name, "dgram"))
        return SOCK_DGRAM;
    if (!strcmp(name, "seqpacket"))
        return SOCK_SEQPACKET;
    if (!strcmp(name, "raw"))
        return SOCK_RAW;
    return SOCK_STREAM;
}

int probe_net(int argc, char** argv)
{
    const char* cmd = argv[1];
    if (!strcmp(cmd, "sendto-unspec") && argc > 3)
        return send_unspec(argv[2], atoi(argv[3]), 0);
    if (!strcmp(cmd, "sendmmsg-unspec") && argc > 3)
        return send_unspec(argv[2], atoi(argv[3]), 1);
    if (!strcmp(cmd, "route-option") && argc > 3) /* route-option 4|6|6sr HOP */
        return set_route_option(argv[2], argv[3]);
    if (!strcmp(cmd, "route-cmsg") && argc > 5) /* route-cmsg 4|6|6sr HOST PORT HOP */
        return send_routed(argv[2], argv[3], atoi(argv[4]), argv[5]);
    if (!strcmp(cmd, "loopback") && argc > 2)
        return loopback_traffic(argv[2]);
    if (!strcmp(cmd, "bind") && argc > 4) /* bind tcp|udp HOST PORT */
        return bind_to(argv[2], argv[3], atoi(argv[4]));
    if (!strcmp(cmd, "udp-exchange") && argc > 4) /* udp-exchange HOST PORT connect|sendto */
        return udp_exchange(argv[2], atoi(argv[3]), argv[4]);
    if (!strcmp(cmd, "socket") && argc > 4) /* socket inet|inet6|netlink stream|dgram|seqpacket|raw PROTOCOL */
        return report(socket(family_of(argv[2]), type_of(argv[3]), atoi(argv[4])));
    return -1;
}
