// SPDX-License-Identifier: Apache-2.0
#include "process/sync_channel.hpp"

#include "base/error.hpp"
#include "base/unix_socket.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace cerberus {
namespace {

struct Header {
    uint32_t type;
    int32_t value;
};

constexpr size_t max_packet = 8192;

} // namespace

std::pair<SyncChannel, SyncChannel> SyncChannel::pair()
{
    int fds[2];
    check(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds), "socketpair for the init sync channel");
    return {SyncChannel(UniqueFd(fds[0])), SyncChannel(UniqueFd(fds[1]))};
}

void SyncChannel::send(SyncMessage type, int32_t value, const std::string& text) const
{
    char buf[max_packet];
    Header h{static_cast<uint32_t>(type), value};
    size_t len = std::min(text.size(), sizeof buf - sizeof h);
    std::memcpy(buf, &h, sizeof h);
    std::memcpy(buf + sizeof h, text.data(), len);
    ssize_t n;
    do
        n = ::send(fd_.get(), buf, sizeof h + len, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        throw_errno("sync channel send");
}

SyncPacket SyncChannel::receive() const
{
    UniqueFd no_fd;
    return receive_with_fd(no_fd);
}

SyncPacket SyncChannel::receive_with_fd(UniqueFd& fd_out) const
{
    char buf[max_packet];
    ssize_t n = unix_socket::receive_with_fd(fd_.get(), buf, sizeof buf, 0, fd_out);
    if (n < 0)
        throw_errno("sync channel receive");
    if (fd_out)
        return {SyncMessage::fd_attached, 0, {}};
    if (n < static_cast<ssize_t>(sizeof(Header)))
        throw Error("container init exited before it was set up", ECHILD);
    Header h;
    std::memcpy(&h, buf, sizeof h);
    return {static_cast<SyncMessage>(h.type), h.value, std::string(buf + sizeof h, n - sizeof h)};
}

SyncPacket SyncChannel::expect(SyncMessage type) const
{
    SyncPacket p = receive();
    if (p.type == SyncMessage::child_error)
        throw Error(p.text, p.value);
    if (p.type != type)
        throw Error("sync channel: unexpected message " + std::to_string(static_cast<uint32_t>(p.type)), EPROTO);
    return p;
}

UniqueFd SyncChannel::receive_fd() const
{
    UniqueFd fd;
    SyncPacket p = receive_with_fd(fd);
    if (p.type == SyncMessage::child_error)
        throw Error(p.text, p.value);
    if (!fd)
        throw Error("sync channel: expected a file descriptor", EPROTO);
    return fd;
}

// The parent learns why its child stopped; once the channel is closed (or the
// parent is gone), stderr does.
static void report_child_error(const std::string& stage, SyncChannel& channel, int errnum, const char* text)
{
    if (channel.fd() >= 0) {
        try {
            channel.send(SyncMessage::child_error, errnum, text);
            return;
        } catch (const Error&) {
        }
    }
    ::dprintf(STDERR_FILENO, "cerberus %s: %s\n", stage.c_str(), text);
}

void run_child(const std::string& stage, SyncChannel& channel, const std::function<void()>& set_up)
{
    ::prctl(PR_SET_NAME, ("cerberus:" + stage).c_str(), 0, 0, 0);
    try {
        set_up();
    } catch (const Error& e) {
        report_child_error(stage, channel, e.errnum(), e.what());
    } catch (const std::exception& e) {
        report_child_error(stage, channel, EIO, e.what());
    }
    ::_exit(1);
}

} // namespace cerberus
