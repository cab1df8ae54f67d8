// SPDX-License-Identifier: Apache-2.0
// What the command shim and the broker say to each other on a container's
// socket (SOCK_SEQPACKET, one call per connection): the shim sends one
// request, JSON {"tool","args","cwd"} with its stdin, stdout and stderr as
// SCM_RIGHTS, and gets one answer, JSON: {"status":N}, {"signal":N},
// {"denied":rule} or {"error":text}. Nothing in a request names the
// container: the broker knows it by the socket the call came on. Shared by
// the broker and the shim, which links only base/ and this.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::broker {

// Where the socket is in the container (the directory is bound read-only).
inline constexpr const char* container_socket_dir = "/run/cerberus/broker";
inline constexpr const char* socket_name = "broker.sock";

// A request, with every argument, fits in this many bytes, and holds at most max_args arguments.
inline constexpr size_t max_request_bytes = 128 * 1024;
inline constexpr size_t max_args = 4096;

// Exit statuses of the shim when the tool did not run.
inline constexpr int denied_status = 126;
inline constexpr int failed_status = 125;

struct Request {
    std::string tool;
    std::vector<std::string> args;
    std::string cwd;
};

std::string request_json(const Request& request);
// Throws Error (EINVAL) saying what is wrong: not JSON, a field missing or of
// another type, more than max_args arguments, a cwd not absolute, a NUL byte.
Request parse_request(std::string_view text);

struct Answer {
    enum class Kind { exited, signaled, denied, failed } kind = Kind::failed;
    int number = 0;   // the exit status or signal
    std::string text; // the rule that denied, or what failed
};

std::string answer_json(const Answer& answer);
// nullopt for a message that is no answer.
std::optional<Answer> parse_answer(std::string_view text);

} // namespace cerberus::broker
