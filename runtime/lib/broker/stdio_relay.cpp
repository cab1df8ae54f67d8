// SPDX-License-Identifier: Apache-2.0
#include "broker/stdio_relay.hpp"

#include "base/error.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <initializer_list>

namespace cerberus::broker {
namespace {

// Writes of at most a pipe's atomic size: a pipe that polls writable takes one whole.
constexpr size_t chunk = 4096;

std::pair<UniqueFd, UniqueFd> make_pipe()
{
    int ends[2];
    check(pipe2(ends, O_CLOEXEC), "a pipe for the tool's stdio");
    return {UniqueFd(ends[0]), UniqueFd(ends[1])};
}

// The broker's own descriptor of one of the caller's streams (socket: set for a socket).
UniqueFd open_caller_stream(int fd, bool writing, bool& socket)
{
    struct stat st{};
    check(fstat(fd, &st), "the caller's stdio");
    socket = S_ISSOCK(st.st_mode);
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        std::string path = "/proc/self/fd/" + std::to_string(fd);
        UniqueFd reopened(open(path.c_str(), (writing ? O_WRONLY : O_RDONLY) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (reopened)
            return reopened;
        if (errno != ENXIO) // a FIFO without a reader: writes fail as they would
            throw_errno("reopening the caller's stdio");
    }
    UniqueFd copy(fcntl(fd, F_DUPFD_CLOEXEC, 3));
    if (!copy)
        throw_errno("the caller's stdio");
    return copy;
}

// Waits until fd is ready for events, or one of stops is readable (its write end closed); true when fd is ready.
bool wait_ready(int fd, short events, std::initializer_list<int> stops)
{
    pollfd fds[3] = {{fd, events, 0}, {-1, 0, 0}, {-1, 0, 0}};
    nfds_t n = 1;
    for (int stop : stops)
        fds[n++] = {stop, POLLIN, 0};
    while (poll(fds, n, -1) < 0)
        if (errno != EINTR)
            return false;
    for (nfds_t i = 1; i < n; ++i)
        if (fds[i].revents)
            return false;
    return true;
}

ssize_t read_some(int fd, bool socket, char* buf, size_t size)
{
    return socket ? recv(fd, buf, size, MSG_DONTWAIT) : read(fd, buf, size);
}

ssize_t write_some(int fd, bool socket, const char* buf, size_t size)
{
    return socket ? send(fd, buf, size, MSG_DONTWAIT | MSG_NOSIGNAL) : write(fd, buf, size);
}

// All of data to fd, waiting for room while abort_fd is not closed; false when it cannot be written.
bool write_all(int fd, bool socket, const char* data, size_t size, int abort_fd)
{
    while (size > 0) {
        ssize_t n = write_some(fd, socket, data, std::min(size, chunk));
        if (n > 0) {
            data += n;
            size -= static_cast<size_t>(n);
        }
        else if (n < 0 && errno == EINTR)
            continue;
        else if (n < 0 && errno == EAGAIN) {
            if (!wait_ready(fd, POLLOUT, {abort_fd}))
                return false;
        }
        else
            return false;
    }
    return true;
}

// Whether two fds are one file (the same pipe, terminal or file), as a shell's 2>&1 makes them.
bool same_file(int a, int b)
{
    struct stat sa{}, sb{};
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// A relay thread takes no signal: a write to a pipe with no reader fails with EPIPE instead of killing the broker.
void block_signals()
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

} // namespace

StdioRelay::StdioRelay(const std::vector<UniqueFd>& caller)
{
    for (int i = 0; i < 3; ++i)
        caller_[i] = open_caller_stream(caller.at(i).get(), i != 0, caller_socket_[i]);
    one_output_ = same_file(caller.at(1).get(), caller.at(2).get());
    auto [in_read, in_write] = make_pipe();
    tool_ends_[0] = std::move(in_read);
    own_ends_[0] = std::move(in_write);
    for (int i = 1; i < (one_output_ ? 2 : 3); ++i) {
        auto [out_read, out_write] = make_pipe();
        own_ends_[i] = std::move(out_read);
        tool_ends_[i] = std::move(out_write);
    }
    for (int i = 0; i < 3; ++i) {
        if (own_ends_[i])
            check(fcntl(own_ends_[i].get(), F_SETFL, O_NONBLOCK), "a pipe for the tool's stdio");
        tool_fds_[i] = tool_ends_[i].get();
    }
    if (one_output_)
        tool_fds_[2] = tool_fds_[1];
    auto [ended_read, ended_write] = make_pipe();
    ended_read_ = std::move(ended_read);
    ended_write_ = std::move(ended_write);
    auto [abort_read, abort_write] = make_pipe();
    abort_read_ = std::move(abort_read);
    abort_write_ = std::move(abort_write);
    done_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!done_)
        throw_errno("eventfd");
}

void StdioRelay::tool_started()
{
    for (auto& end : tool_ends_)
        end.reset();
    running_ = one_output_ ? 2 : 3;
    threads_.emplace_back([this] { pump_input(); });
    threads_.emplace_back([this] { pump_output(own_ends_[1].get(), caller_[1].get(), caller_socket_[1]); });
    if (!one_output_)
        threads_.emplace_back([this] { pump_output(own_ends_[2].get(), caller_[2].get(), caller_socket_[2]); });
}

void StdioRelay::tool_ended()
{
    ended_write_.reset();
}

void StdioRelay::stop() noexcept
{
    ended_write_.reset();
    abort_write_.reset();
    for (auto& thread : threads_)
        thread.join();
    threads_.clear();
}

void StdioRelay::thread_done() noexcept
{
    if (--running_ == 0) {
        uint64_t one = 1;
        [[maybe_unused]] ssize_t n = write(done_.get(), &one, sizeof one); // an eventfd below its maximum takes it
    }
}

// The caller's stdin to the tool's, until its end (then the tool reads its
// end too), the tool's end (it closed its stdin, or was reaped) or a stop.
void StdioRelay::pump_input()
{
    block_signals();
    char buf[chunk];
    for (;;) {
        ssize_t n = read_some(caller_[0].get(), caller_socket_[0], buf, sizeof buf);
        if (n > 0) {
            if (!write_all(own_ends_[0].get(), false, buf, static_cast<size_t>(n), ended_read_.get()))
                break;
            bytes_in_ += static_cast<uint64_t>(n);
        }
        else if (n == 0 || (errno != EAGAIN && errno != EINTR))
            break;
        else if (errno == EAGAIN && !wait_ready(caller_[0].get(), POLLIN, {ended_read_.get(), abort_read_.get()}))
            break;
    }
    own_ends_[0].reset();
    thread_done();
}

// The tool's stdout or stderr to the caller's, until every writer closed it,
// or (once the tool ended) until it is empty. What the caller cannot take is
// read and dropped, so that the tool is not held up writing it.
void StdioRelay::pump_output(int from, int to, bool to_socket)
{
    block_signals();
    char buf[chunk * 4];
    bool delivering = true;
    bool ended = false;
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n > 0) {
            if (delivering)
                delivering = write_all(to, to_socket, buf, static_cast<size_t>(n), abort_read_.get());
            if (delivering)
                bytes_out_ += static_cast<uint64_t>(n);
            continue;
        }
        if (n == 0 || errno != EAGAIN) {
            if (n < 0 && errno == EINTR)
                continue;
            break;
        }
        if (ended) // drained
            break;
        pollfd fds[3] = {{from, POLLIN, 0}, {ended_read_.get(), POLLIN, 0}, {abort_read_.get(), POLLIN, 0}};
        while (poll(fds, 3, -1) < 0 && errno == EINTR) {
        }
        if (fds[2].revents)
            break;
        ended = fds[1].revents != 0;
    }
    thread_done();
}

} // namespace cerberus::broker
