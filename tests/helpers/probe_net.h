// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's rerouting and protocol commands (probe_net.c). */
#pragma once

#include <sys/socket.h>

/* Fills an IPv4 or IPv6 socket address from text; exits on bad text (probe.c). */
socklen_t make_addr(const char* host, int port, struct sockaddr_storage* ss);

/* Prints "ok" when rc is not negative, else errno's number and name; 0 or 1 (probe.c). */
int report(int rc);

/* Runs argv[1] if it is one of them; -1 if it is not. */
int probe_net(int argc, char** argv);
