// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's rerouting and protocol commands (probe_net.c), its DNS client
 * (probe_dns.c), its calls through other system call ABIs (probe_abi.c), its
 * renames (probe_place.c), its reach into other processes (probe_reach.c and,
 * through a file's owner, probe_owner.c) and
 * its datagrams out a device it names (probe_device.c). */
#pragma once

#include <sys/socket.h>

/* Fills an IPv4 or IPv6 socket address from text; exits on bad text (probe.c). */
socklen_t make_addr(const char* host, int port, struct sockaddr_storage* ss);

/* Prints "ok" when rc is not negative, else errno's number and name; 0 or 1 (probe.c). */
int report(int rc);

/* CLOCK_MONOTONIC in nanoseconds, and the line every loop command prints:
 * "ns_per_op=N failed=N last_error=NAME cpu_per_op_ns=N" (probe.c). */
long long now_ns(void);
struct loop_clock {
    long long wall_ns; /* CLOCK_MONOTONIC */
    long long cpu_ns;  /* CPU time of the probe and of the children it waited for */
};
struct loop_clock loop_start(void);
int loop_report(struct loop_clock start, int n, int failed, const char* last_error);

/* AF_INET6, AF_NETLINK, AF_PACKET for "inet6", "netlink", "packet"; else AF_INET (probe_net.c). */
int family_of(const char* name);

/* Runs argv[1] if it is one of them; -1 if it is not. */
int probe_net(int argc, char** argv);

/* "dns NAME SERVER udp|tcp [A|AAAA]", "loop-dns N NAME SERVER" (NAME may hold
 * one %d: the query's number, 1 to N); -1 for another command. */
int probe_dns(int argc, char** argv);

/* "abi 64|32|hi CALL ARGS": a system call, named or numbered, through another ABI (probe_abi.c); -1 for
 * another command. */
int probe_abi(int argc, char** argv);

/* "rename OLD NEW [noreplace|exchange|whiteout]" (probe_place.c); -1 for another command. */
int probe_place(int argc, char** argv);

/* open(O_RDONLY) + close of PATH, n times, and the loop's line (probe.c). */
int loop_open(int n, const char* path);

/* "loop-open-landlocked N PATH DIR": loop_open under a Landlock ruleset of the probe's own
 * (probe_landlock.c); -1 for another command. */
int probe_landlock(int argc, char** argv);

/* "victim SECONDS", "poke PID ADDR" and the other acts on processes (probe_reach.c); -1 for another command. */
int probe_reach(int argc, char** argv);

/* "send-via HOW HOST PORT", "udp-listen HOST PORT SECONDS" (probe_device.c); -1 for another command. */
int probe_device(int argc, char** argv);

/* "owner-signal HOW PID", "owner-signal-child HOW" (probe_owner.c); -1 for another command. */
int probe_owner(int argc, char** argv);
