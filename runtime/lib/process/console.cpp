// SPDX-License-Identifier: Apache-2.0
#include "process/console.hpp"

#include "base/error.hpp"
#include "base/unix_socket.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>


namespace cerberus::console {

UniqueFd connect_socket(const std::string& path)
{
    return with_context("--console-socket " + path, [&] { return unix_socket::connect(path); });
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
    // With the pty's name, as runc's recvtty expects.
    with_context("sending the terminal to the console socket",
                 [&] { unix_socket::send_with_fd(socket_fd, name, master.get()); });
    if (::setsid() < 0)
        throw_errno("setsid");
    if (::ioctl(slave.get(), TIOCSCTTY, 0) != 0)
        throw_errno("TIOCSCTTY");
    for (int target = 0; target < 3; ++target)
        if (::dup2(slave.get(), target) < 0)
            throw_errno("dup2 terminal");
}

} // namespace cerberus::console
