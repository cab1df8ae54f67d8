// SPDX-License-Identifier: Apache-2.0
/* The smallest DNS forwarder that can sit between an agent and its resolver, for bench/dns.sh --floor: each
 * query read is sent on to the resolver, its answer read and sent back, nothing parsed, judged, cached or
 * recorded. What it costs over a query straight to the resolver is what any process in that position costs
 * on this host: the floor under the DNS gate's first-query ratio. One query at a time, as the bench asks.
 *   relay LISTEN_ADDRESS UPSTREAM_ADDRESS   (IPv4, port 53 both; prints "listening" once bound) */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static struct sockaddr_in address_of(const char *text)
{
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(53)};
    if (inet_pton(AF_INET, text, &address.sin_addr) != 1) {
        fprintf(stderr, "relay: not an IPv4 address: %s\n", text);
        exit(2);
    }
    return address;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: relay LISTEN_ADDRESS UPSTREAM_ADDRESS\n");
        return 2;
    }
    struct sockaddr_in listen_address = address_of(argv[1]);
    struct sockaddr_in upstream = address_of(argv[2]);
    int agents = socket(AF_INET, SOCK_DGRAM, 0);
    int resolver = socket(AF_INET, SOCK_DGRAM, 0);
    /* A lost answer must not stop the relay: the agent asks again. */
    struct timeval wait = {.tv_sec = 1};
    if (agents < 0 || resolver < 0 ||
        bind(agents, (struct sockaddr *)&listen_address, sizeof(listen_address)) != 0 ||
        connect(resolver, (struct sockaddr *)&upstream, sizeof(upstream)) != 0 ||
        setsockopt(resolver, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait)) != 0) {
        perror("relay");
        return 1;
    }
    printf("listening\n");
    fflush(stdout);
    unsigned char message[65536];
    for (;;) {
        struct sockaddr_in agent;
        socklen_t agent_length = sizeof(agent);
        ssize_t n = recvfrom(agents, message, sizeof(message), 0, (struct sockaddr *)&agent, &agent_length);
        if (n <= 0 || send(resolver, message, (size_t)n, 0) != n)
            continue;
        n = recv(resolver, message, sizeof(message), 0);
        if (n > 0)
            sendto(agents, message, (size_t)n, 0, (struct sockaddr *)&agent, agent_length);
    }
}
