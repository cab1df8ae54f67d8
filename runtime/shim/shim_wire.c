/* SPDX-License-Identifier: Apache-2.0 */
#include "shim_wire.h"

#include <string.h>

static char* put_string(char* at, const char* text)
{
    size_t length = strlen(text) + 1;
    memcpy(at, text, length);
    return at + length;
}

size_t shim_wire_write_request(char* buf, size_t capacity, const char* tool, const char* cwd, size_t arg_count,
                               const char* const* args)
{
    size_t length = sizeof(struct cerberus_wire_request) + strlen(tool) + 1 + strlen(cwd) + 1;
    for (size_t i = 0; i < arg_count; ++i)
        length += strlen(args[i]) + 1;
    if (length > capacity)
        return length;
    struct cerberus_wire_request header = {CERBERUS_WIRE_MAGIC, (uint32_t)arg_count};
    memcpy(buf, &header, sizeof header);
    char* at = put_string(put_string(buf + sizeof header, tool), cwd);
    for (size_t i = 0; i < arg_count; ++i)
        at = put_string(at, args[i]);
    return length;
}

int shim_wire_read_answer(const char* message, size_t length, struct shim_wire_answer* answer)
{
    struct cerberus_wire_answer header;
    if (length < sizeof header)
        return -1;
    memcpy(&header, message, sizeof header);
    if (header.magic != CERBERUS_WIRE_MAGIC || header.text_length != length - sizeof header)
        return -1;
    switch (header.kind) {
    case CERBERUS_WIRE_EXITED:
    case CERBERUS_WIRE_SIGNALED:
    case CERBERUS_WIRE_DENIED:
    case CERBERUS_WIRE_FAILED: break;
    default: return -1;
    }
    answer->kind = (enum cerberus_wire_answer_kind)header.kind;
    answer->number = header.number;
    answer->text = message + sizeof header;
    answer->text_length = header.text_length;
    return 0;
}
