// SPDX-License-Identifier: Apache-2.0
// What the command shim and the broker say to each other on a container's
// socket (SOCK_SEQPACKET, one call per connection): the shim sends one
// request, with its stdin, stdout and stderr as SCM_RIGHTS, and gets one
// answer: the tool exited with N, was ended by signal N, was denied by a
// rule, or did not run (an error's text). The bytes are broker_wire.h's,
// declared once for both ends: the shim (runtime/shim/, C) writes requests and
// reads answers, this reads requests and writes answers. Nothing in a request
// names the container: the broker knows it by the socket the call came on.
#pragma once

#include "broker/broker_wire.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::broker {

// Where the socket is in the container (the directory is bound read-only).
inline constexpr const char* container_socket_dir = CERBERUS_WIRE_SOCKET_DIR;
inline constexpr const char* socket_name = CERBERUS_WIRE_SOCKET_NAME;

// A request, with every argument, fits in this many bytes, and holds at most max_args arguments.
inline constexpr size_t max_request_bytes = CERBERUS_WIRE_MAX_REQUEST_BYTES;
inline constexpr size_t max_args = CERBERUS_WIRE_MAX_ARGS;

// Exit statuses of the shim when the tool did not run.
inline constexpr int denied_status = CERBERUS_WIRE_DENIED_STATUS;
inline constexpr int failed_status = CERBERUS_WIRE_FAILED_STATUS;

struct Request {
    std::string tool;
    std::vector<std::string> args;
    std::string cwd;
};

// Throws Error (EINVAL) saying what is wrong: longer than max_request_bytes,
// shorter than its header, another magic (another version of the wire), more
// than max_args arguments, strings not as many as the header says or the last
// not NUL-terminated, a cwd not absolute, text that is not UTF-8.
Request parse_request(std::string_view message);

struct Answer {
    enum class Kind { exited, signaled, denied, failed } kind = Kind::failed;
    int number = 0;   // the exit status or signal
    std::string text; // the rule that denied, or what failed
};

std::string answer_message(const Answer& answer);

} // namespace cerberus::broker
