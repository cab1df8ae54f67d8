// SPDX-License-Identifier: Apache-2.0
// The smallest relay that can sit where the egress proxy sits (bench/egress.sh --floor): it accepts TCP
// connections on LISTEN-ADDRESS:PORT, connects each to TARGET-ADDRESS:PORT and moves the bytes both ways
// unread and unchanged, a thread a direction, through a pipe with splice(2) (no copy to user space). TLS passes
// through it end to end, as a proxy that only checked the server name would pass it after the ClientHello.
// Its cost against a direct connection is what any relay in that position costs on this host: two more
// sockets, a wake-up per segment, the loopback path once more.
// usage: relay LISTEN-ADDRESS PORT TARGET-ADDRESS PORT (prints "listening" once it does)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in target;

struct direction {
    int from, to;
};

static struct sockaddr_in address_of(const char* address, const char* port)
{
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(port))};
    if (inet_pton(AF_INET, address, &in.sin_addr) != 1) {
        fprintf(stderr, "relay: not an IPv4 address: %s\n", address);
        exit(2);
    }
    return in;
}

// Moves from's bytes to to until from ends, then ends to's sending side.
static void* move_bytes(void* arg)
{
    struct direction* d = arg;
    int pipe_ends[2];
    if (pipe2(pipe_ends, O_CLOEXEC) == 0) {
        fcntl(pipe_ends[1], F_SETPIPE_SZ, 1 << 20);
        ssize_t got;
        while ((got = splice(d->from, NULL, pipe_ends[1], NULL, 1 << 20, SPLICE_F_MOVE)) > 0)
            while (got > 0) {
                ssize_t sent = splice(pipe_ends[0], NULL, d->to, NULL, (size_t)got, SPLICE_F_MOVE);
                if (sent <= 0)
                    goto done;
                got -= sent;
            }
    done:
        close(pipe_ends[0]);
        close(pipe_ends[1]);
    }
    shutdown(d->to, SHUT_WR);
    shutdown(d->from, SHUT_RD);
    return NULL;
}

static void* serve(void* arg)
{
    int client = (int)(long)arg;
    int server = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    if (server >= 0 && connect(server, (struct sockaddr*)&target, sizeof target) == 0) {
        // As the proxy's sockets: a segment goes when written, not held for the ACK of the one before.
        setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        setsockopt(server, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        struct direction up = {client, server}, down = {server, client};
        pthread_t upward;
        if (pthread_create(&upward, NULL, move_bytes, &up) == 0) {
            move_bytes(&down);
            pthread_join(upward, NULL);
        }
    }
    if (server >= 0)
        close(server);
    close(client);
    return NULL;
}

int main(int argc, char** argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: relay LISTEN-ADDRESS PORT TARGET-ADDRESS PORT\n");
        return 2;
    }
    struct sockaddr_in listen_at = address_of(argv[1], argv[2]);
    target = address_of(argv[3], argv[4]);
    int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int on = 1;
    setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (listener < 0 || bind(listener, (struct sockaddr*)&listen_at, sizeof listen_at) != 0 ||
        listen(listener, 64) != 0) {
        perror("relay: listening");
        return 1;
    }
    printf("listening\n");
    fflush(stdout);
    for (;;) {
        int client = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (client < 0)
            continue;
        pthread_t thread;
        if (pthread_create(&thread, NULL, serve, (void*)(long)client) == 0)
            pthread_detach(thread);
        else
            close(client);
    }
}
