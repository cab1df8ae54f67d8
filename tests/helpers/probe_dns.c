// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's DNS client: one query, over UDP (an unconnected socket, so
 * the answer's source address is what recvfrom says) or TCP, built and read
 * with glibc's libresolv. Prints
 *   rcode=NOERROR answers=198.51.100.1,2001:db8::10 from=203.0.113.53:53
 * or "errno=N (NAME)" when a socket call fails, "timeout" when no answer came. */
#define _GNU_SOURCE
#include "probe_net.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <errno.h>
#include <netinet/in.h>
#include <resolv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static const char* rcode_name(int rcode)
{
    static const char* names[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED"};
    return rcode >= 0 && rcode < 6 ? names[rcode] : "OTHER";
}

static void print_answer(const unsigned char* answer, int len, const struct sockaddr_storage* from)
{
    ns_msg msg;
    if (ns_initparse(answer, len, &msg) < 0) {
        printf("unparsable answer (%d bytes)\n", len);
        return;
    }
    printf("rcode=%s answers=", rcode_name(ns_msg_getflag(msg, ns_f_rcode)));
    int printed = 0;
    for (int i = 0; i < ns_msg_count(msg, ns_s_an); ++i) {
        ns_rr rr;
        char text[INET6_ADDRSTRLEN];
        if (ns_parserr(&msg, ns_s_an, i, &rr) < 0)
            break;
        int family = ns_rr_type(rr) == ns_t_a && ns_rr_rdlen(rr) == 4       ? AF_INET
                     : ns_rr_type(rr) == ns_t_aaaa && ns_rr_rdlen(rr) == 16 ? AF_INET6
                                                                            : 0;
        if (family && inet_ntop(family, ns_rr_rdata(rr), text, sizeof text))
            printf("%s%s", printed++ ? "," : "", text);
    }
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    if (from && from->ss_family == AF_INET) {
        const struct sockaddr_in* in4 = (const struct sockaddr_in*)from;
        inet_ntop(AF_INET, &in4->sin_addr, host, sizeof host);
        port = ntohs(in4->sin_port);
    } else if (from && from->ss_family == AF_INET6) {
        const struct sockaddr_in6* in6 = (const struct sockaddr_in6*)from;
        inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
        port = ntohs(in6->sin6_port);
    }
    if (from)
        printf(" from=%s:%d", host, port);
    printf("\n");
}

static int exchange_udp(int fd, const unsigned char* query, int len, const struct sockaddr_storage* server,
                        socklen_t server_len)
{
    unsigned char answer[NS_MAXMSG];
    struct sockaddr_storage from;
    socklen_t from_len = sizeof from;
    if (sendto(fd, query, len, 0, (const struct sockaddr*)server, server_len) < 0)
        return report(-1);
    ssize_t got = recvfrom(fd, answer, sizeof answer, 0, (struct sockaddr*)&from, &from_len);
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        printf("timeout\n");
        return 1;
    }
    if (got < 0)
        return report(-1);
    print_answer(answer, (int)got, &from);
    return 0;
}

static int read_all(int fd, unsigned char* buf, size_t len)
{
    for (size_t done = 0; done < len;) {
        ssize_t got = read(fd, buf + done, len - done);
        if (got <= 0)
            return -1;
        done += (size_t)got;
    }
    return 0;
}

static int exchange_tcp(int fd, const unsigned char* query, int len, const struct sockaddr_storage* server,
                        socklen_t server_len)
{
    if (connect(fd, (const struct sockaddr*)server, server_len) < 0)
        return report(-1);
    unsigned char framed[2 + NS_PACKETSZ];
    framed[0] = (unsigned char)(len >> 8);
    framed[1] = (unsigned char)len;
    memcpy(framed + 2, query, len);
    if (write(fd, framed, len + 2) != len + 2)
        return report(-1);
    unsigned char size[2];
    static unsigned char answer[NS_MAXMSG];
    if (read_all(fd, size, 2) < 0 || read_all(fd, answer, (size[0] << 8) | size[1]) < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            printf("timeout\n");
            return 1;
        }
        printf("closed\n");
        return 1;
    }
    print_answer(answer, (size[0] << 8) | size[1], NULL);
    return 0;
}

/* dns NAME SERVER udp|tcp [A|AAAA] */
static int dns_query(const char* name, const char* server_text, const char* proto, const char* type_text)
{
    int type = type_text && !strcmp(type_text, "AAAA") ? ns_t_aaaa : ns_t_a;
    unsigned char query[NS_PACKETSZ];
    int len = res_mkquery(ns_o_query, name, ns_c_in, type, NULL, 0, NULL, query, sizeof query);
    if (len < 0) {
        fprintf(stderr, "cannot build a query for %s\n", name);
        return 2;
    }
    struct sockaddr_storage server;
    socklen_t server_len = make_addr(server_text, NS_DEFAULTPORT, &server);
    int tcp = !strcmp(proto, "tcp");
    int fd = socket(server.ss_family, tcp ? SOCK_STREAM : SOCK_DGRAM, 0);
    if (fd < 0)
        return report(-1);
    struct timeval timeout = {.tv_sec = 3};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    int rc = tcp ? exchange_tcp(fd, query, len, &server, server_len) : exchange_udp(fd, query, len, &server, server_len);
    close(fd);
    return rc;
}

/* N queries over one UDP socket, each waiting for its answer; one that times
 * out or is not NOERROR with an answer counts as failed. */
static int loop_dns(int n, const char* name_format, const char* server_text)
{
    struct sockaddr_storage server;
    socklen_t server_len = make_addr(server_text, NS_DEFAULTPORT, &server);
    int fd = socket(server.ss_family, SOCK_DGRAM, 0);
    if (fd < 0)
        return report(-1);
    struct timeval timeout = {.tv_sec = 3};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    int failed = 0;
    const char* last = NULL;
    struct loop_clock start = loop_start();
    for (int i = 1; i <= n; ++i) {
        char name[NS_MAXDNAME];
        snprintf(name, sizeof name, name_format, i);
        unsigned char query[NS_PACKETSZ], answer[NS_MAXMSG];
        int len = res_mkquery(ns_o_query, name, ns_c_in, ns_t_a, NULL, 0, NULL, query, sizeof query);
        ssize_t got = -1;
        if (len > 0 && sendto(fd, query, len, 0, (struct sockaddr*)&server, server_len) == len)
            got = recv(fd, answer, sizeof answer, 0);
        ns_msg msg;
        if (got < 0) {
            failed++;
            last = strerrorname_np(errno) ? strerrorname_np(errno) : "?";
        } else if (ns_initparse(answer, (int)got, &msg) < 0 || ns_msg_getflag(msg, ns_f_rcode) != ns_r_noerror ||
                   ns_msg_count(msg, ns_s_an) == 0) {
            failed++;
            last = "no answer";
        }
    }
    close(fd);
    return loop_report(start, n, failed, last);
}

int probe_dns(int argc, char** argv)
{
    if (!strcmp(argv[1], "loop-dns") && argc > 4)
        return loop_dns(atoi(argv[2]), argv[3], argv[4]);
    if (strcmp(argv[1], "dns"))
        return -1;
    if (argc < 5) {
        fprintf(stderr, "usage: dns NAME SERVER udp|tcp [A|AAAA]\n");
        return 2;
    }
    return dns_query(argv[2], argv[3], argv[4], argc > 5 ? argv[5] : NULL);
}
