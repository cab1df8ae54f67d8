// SPDX-License-Identifier: Apache-2.0
// Unix sockets: connecting to a path, and a file descriptor passed with a
// message (SCM_RIGHTS), for the console socket, the parent/child channel and
// the seccomp listener.
#pragma once

#include "base/fd.hpp"

#include <sys/types.h>

#include <span>
#include <string>
#include <vector>

namespace cerberus::unix_socket {

// A SOCK_STREAM socket connected to path; callers name the path in errors.
UniqueFd connect(const std::string& path);

// Sends payload (not empty) with fd riding on its first byte; on a stream
// socket a short send is completed without it.
void send_with_fd(int socket_fd, const std::string& payload, int fd);

// The same with several fds (at most max_fds_per_message).
void send_with_fds(int socket_fd, const std::string& payload, std::span<const int> fds);
inline constexpr size_t max_fds_per_message = 8;

// Receives one message (at most len bytes) and the fd sent with it, if any,
// into fd_out (close-on-exec). Returns the byte count, or -1 with errno;
// EINTR is retried.
ssize_t receive_with_fd(int socket_fd, void* buf, size_t len, int flags, UniqueFd& fd_out);

// The same with every fd the message brought (up to max_fds_per_message; more
// are closed by the kernel, and MSG_CTRUNC set in *msg_flags), in order.
ssize_t receive_with_fds(int socket_fd, void* buf, size_t len, int flags, std::vector<UniqueFd>& fds_out,
                         int* msg_flags = nullptr);

} // namespace cerberus::unix_socket
