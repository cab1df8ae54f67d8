/* SPDX-License-Identifier: Apache-2.0 */
/* The shim's ends of the wire (broker/broker_wire.h): it writes requests and
 * reads answers; the broker (broker_protocol.hpp) reads requests and writes
 * answers. Apart from the shim's main so the unit tests hold both ends together. */
#ifndef CERBERUS_SHIM_WIRE_H
#define CERBERUS_SHIM_WIRE_H

#include "broker/broker_wire.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the request for tool run in cwd with args into buf when it fits in
 * capacity; returns its length either way (more than capacity: nothing written). */
size_t shim_wire_write_request(char* buf, size_t capacity, const char* tool, const char* cwd, size_t arg_count,
                               const char* const* args);

struct shim_wire_answer {
    enum cerberus_wire_answer_kind kind;
    int number;
    const char* text; /* into the message read, text_length bytes, no NUL */
    size_t text_length;
};

/* 0 with *answer filled when message is an answer, -1 when it is not one. */
int shim_wire_read_answer(const char* message, size_t length, struct shim_wire_answer* answer);

#ifdef __cplusplus
}
#endif

#endif
