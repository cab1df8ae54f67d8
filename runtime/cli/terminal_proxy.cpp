// SPDX-License-Identifier: Apache-2.0
#include "terminal_proxy.hpp"

#include "base/error.hpp"
#include "base/unix_socket.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>


namespace cerberus::cli {
namespace {

// Puts stdin in raw mode while alive, when it is a terminal.
class RawStdin {
public:
    RawStdin()
    {
        if (::tcgetattr(STDIN_FILENO, &saved_) != 0)
            return;
        struct termios raw = saved_;
        ::cfmakeraw(&raw);
        active_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    ~RawStdin()
    {
        if (active_)
            ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
    }

private:
    struct termios saved_ {};
    bool active_ = false;
};

void copy_window_size(int master)
{
    struct winsize ws;
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
        ::ioctl(master, TIOCSWINSZ, &ws);
}

// Copies what is readable from in to out; false at end of file or error.
bool pump(int in, int out)
{
    char buf[8192];
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n <= 0)
        return false;
    for (ssize_t done = 0; done < n;) {
        ssize_t w = ::write(out, buf + done, n - done);
        if (w <= 0)
            return false;
        done += w;
    }
    return true;
}

int exit_code(int status)
{
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Copies what the process wrote before it exited.
void drain(int master)
{
    ::fcntl(master, F_SETFL, ::fcntl(master, F_GETFL) | O_NONBLOCK);
    while (pump(master, STDOUT_FILENO)) {
    }
}

} // namespace

ConsoleChannel make_console_channel()
{
    int fds[2];
    check(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), "socketpair for the terminal");
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

UniqueFd receive_master(int runtime_end)
{
    char name[256];
    UniqueFd master;
    unix_socket::receive_with_fd(runtime_end, name, sizeof name, MSG_DONTWAIT, master);
    return master;
}

int proxy_terminal_and_wait(pid_t pid, int master)
{
    sigset_t set;
    ::sigfillset(&set);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    UniqueFd signals(::signalfd(-1, &set, SFD_CLOEXEC));
    if (!signals)
        throw_errno("signalfd");
    RawStdin raw;
    copy_window_size(master);
    bool stdin_open = true;
    for (;;) {
        struct pollfd fds[3] = {{master, POLLIN, 0}, {signals.get(), POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
        if (::poll(fds, stdin_open ? 3 : 2, -1) < 0 && errno != EINTR)
            throw_errno("poll the terminal");
        // The slave side closes with the last process holding it (EIO or EOF):
        // the process is exiting.
        if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !pump(master, STDOUT_FILENO)) {
            int status;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            return exit_code(status);
        }
        if (stdin_open && (fds[2].revents & (POLLIN | POLLHUP)) && !pump(STDIN_FILENO, master))
            stdin_open = false;
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo info;
            if (::read(signals.get(), &info, sizeof info) != sizeof info)
                continue;
            if (info.ssi_signo == SIGWINCH)
                copy_window_size(master);
            else if (info.ssi_signo != SIGCHLD)
                ::kill(pid, info.ssi_signo);
            else if (int status; ::waitpid(pid, &status, WNOHANG) == pid) {
                drain(master);
                return exit_code(status);
            }
        }
    }
}

} // namespace cerberus::cli
