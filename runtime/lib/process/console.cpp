#include "process/console.hpp"

#include "base/error.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include <cstring>

namespace cerberus::console {

UniqueFd connect_socket(const std::string& path)
{
    UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd)
        throw_errno("socket for --console-socket");
    struct sockaddr_un addr = {};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        throw Error("--console-socket " + path + ": path too long", ENAMETOOLONG);
    std::strcpy(addr.sun_path, path.c_str());
    if (::connect(fd.get(), reinterpret_cast<struct sockaddr*>(&addr), sizeof addr) != 0)
        throw_errno("connect to --console-socket " + path);
    return fd;
}

void send_fd(int socket_fd, int fd, const std::string& name)
{
    char control[CMSG_SPACE(sizeof(int))] = {};
    struct iovec iov = {const_cast<char*>(name.data()), name.size()};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    if (::sendmsg(socket_fd, &msg, MSG_NOSIGNAL) < 0)
        throw_errno("sending the terminal to the console socket");
}

ssize_t receive_with_fd(int socket_fd, void* buf, size_t len, int flags, UniqueFd& fd_out)
{
    char control[CMSG_SPACE(sizeof(int))] = {};
    struct iovec iov = {buf, len};
    struct msghdr msg = {};
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
    if (struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg && cmsg->cmsg_type == SCM_RIGHTS) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(cmsg), sizeof fd);
        fd_out.reset(fd);
    }
    return n;
}

void setup_terminal(int socket_fd, const std::optional<spec::ConsoleSize>& size)
{
    UniqueFd master(::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!master)
        throw_errno("open /dev/ptmx");
    if (::unlockpt(master.get()) != 0)
        throw_errno("unlockpt");
    char name[128];
    if (::ptsname_r(master.get(), name, sizeof name) != 0)
        throw_errno("ptsname");
    if (size) {
        struct winsize ws = {};
        ws.ws_row = size->height;
        ws.ws_col = size->width;
        ::ioctl(master.get(), TIOCSWINSZ, &ws);
    }
    UniqueFd slave(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!slave)
        throw_errno(std::string("open ") + name);
    send_fd(socket_fd, master.get(), name);
    if (::setsid() < 0)
        throw_errno("setsid");
    if (::ioctl(slave.get(), TIOCSCTTY, 0) != 0)
        throw_errno("TIOCSCTTY");
    for (int target = 0; target < 3; ++target)
        if (::dup2(slave.get(), target) < 0)
            throw_errno("dup2 terminal");
}

} // namespace cerberus::console
