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
    iovec iov{const_cast<char*>(payload.data()), payload.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
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
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
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
    if (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg && cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
        fd_out.reset(fd);
    }
    return n;
}

} // namespace cerberus::unix_socket
