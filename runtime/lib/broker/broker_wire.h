/* SPDX-License-Identifier: Apache-2.0 */
/* The bytes the command shim and the broker exchange on a container's socket
 * (SOCK_SEQPACKET, one call per connection, both ends on the same host), declared
 * once for both: the shim is C (runtime/shim/, built with musl so an exec of it
 * costs few page faults), the broker C++ (broker_protocol.hpp says what it checks).
 *
 * A request is one message, with the shim's stdin, stdout and stderr as SCM_RIGHTS:
 *     struct cerberus_wire_request, then arg_count + 2 NUL-terminated strings:
 *     the tool's name, the working directory, then each argument; nothing after.
 * An answer is one message: struct cerberus_wire_answer, then text_length bytes
 * of text (no NUL): the rule that denied the call, or what failed.
 * Integers are in the host's byte order. The magic names the version: a change
 * of layout is a new magic, so a shim and a broker of different builds refuse
 * each other's messages instead of misreading them. */
#ifndef CERBERUS_BROKER_WIRE_H
#define CERBERUS_BROKER_WIRE_H

#include <stdint.h>

/* "cbw1": cerberus broker wire, version 1; its bytes, low byte first, are the name.
 * The broker's run directory carries the name (broker_registry.hpp), so a
 * build speaking another wire starts a broker of its own, never asks this one. */
#define CERBERUS_WIRE_NAME "cbw1"
#define CERBERUS_WIRE_MAGIC 0x31776263u

/* Where the socket is in the container (the directory is bound read-only). */
#define CERBERUS_WIRE_SOCKET_DIR "/run/cerberus/broker"
#define CERBERUS_WIRE_SOCKET_NAME "broker.sock"

/* A request, header and strings, fits in this many bytes and holds at most this many arguments. */
#define CERBERUS_WIRE_MAX_REQUEST_BYTES (128 * 1024)
#define CERBERUS_WIRE_MAX_ARGS 4096

/* Exit statuses of the shim when the tool did not run. */
#define CERBERUS_WIRE_DENIED_STATUS 126
#define CERBERUS_WIRE_FAILED_STATUS 125

struct cerberus_wire_request {
    uint32_t magic;
    uint32_t arg_count;
};

enum cerberus_wire_answer_kind {
    CERBERUS_WIRE_EXITED = 1,   /* number: the tool's exit status */
    CERBERUS_WIRE_SIGNALED = 2, /* number: the signal that ended it */
    CERBERUS_WIRE_DENIED = 3,   /* text: the rule that denied the call */
    CERBERUS_WIRE_FAILED = 4,   /* text: what failed; the tool did not run, or its end is unknown */
};

struct cerberus_wire_answer {
    uint32_t magic;
    uint32_t kind; /* an enum cerberus_wire_answer_kind */
    int32_t number;
    uint32_t text_length;
};

#endif
