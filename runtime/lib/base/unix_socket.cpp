// SPDX-License-Identifier: Apache-2.0
#include "base/unix_socket.hpp"

#include "base/error.hpp"

#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

namespace cerberus::unix_socket {

UniqueFd connect(const std::string& path)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        throw Error("socket path is longer than " + std::to_string(sizeof addr.sun_path - 1) + " bytes",
                    ENAMETOOLONG);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd fd(static_cast<int>(check(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket")));
    check(::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr), "connect");
    return fd;
}

void send_with_fd(int socket_fd, const std::string& payload, int fd)
{
    send_with_fds(socket_fd, payload, std::span<const int>(&fd, 1));
}

void send_with_fds(int socket_fd, const std::string& payload, std::span<const int> fds)
{
    if (fds.size() > max_fds_per_message)
        throw Error("sendmsg: " + std::to_string(fds.size()) + " fds in one message", EINVAL);
    iovec iov{const_cast<char*>(payload.data()), payload.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_fds_per_message)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
    ssize_t n;
    do
        n = ::sendmsg(socket_fd, &msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    for (size_t sent = static_cast<size_t>(check(n, "sendmsg")); sent < payload.size(); sent += n) {
        n = ::send(socket_fd, payload.data() + sent, payload.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            n = 0;
        else
            check(n, "send");
    }
}

ssize_t receive_with_fd(int socket_fd, void* buf, size_t len, int flags, UniqueFd& fd_out)
{
    std::vector<UniqueFd> fds;
    ssize_t n = receive_with_fds(socket_fd, buf, len, flags, fds);
    if (!fds.empty())
        fd_out = std::move(fds.front()); // any others close here
    return n;
}

ssize_t receive_with_fds(int socket_fd, void* buf, size_t len, int flags, std::vector<UniqueFd>& fds_out,
                         int* msg_flags)
{
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_fds_per_message)] = {};
    iovec iov{buf, len};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do
        n = ::recvmsg(socket_fd, &msg, flags | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return n;
    if (msg_flags)
        *msg_flags = msg.msg_flags;
    for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
        if (cmsg->cmsg_level != SOL_SOCKET || cmsg->cmsg_type != SCM_RIGHTS)
            continue;
        size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; ++i) {
            int fd;
            std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof fd);
            fds_out.emplace_back(fd);
        }
    }
    return n;
}

} // namespace cerberus::unix_socket
