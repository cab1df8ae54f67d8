// SPDX-License-Identifier: Apache-2.0
#include "egress/tunnel.hpp"

#include "base/error.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <fcntl.h>
#include <poll.h>

namespace cerberus::egress {
namespace {

// One socket non-blocking while the tunnel runs, as it was after.
class NonBlocking {
public:
    explicit NonBlocking(int fd) : fd_(fd), flags_(static_cast<int>(check(::fcntl(fd, F_GETFL), "fcntl F_GETFL")))
    {
        check(::fcntl(fd, F_SETFL, flags_ | O_NONBLOCK), "fcntl F_SETFL O_NONBLOCK");
    }
    ~NonBlocking() { ::fcntl(fd_, F_SETFL, flags_); }
    NonBlocking(const NonBlocking&) = delete;
    NonBlocking& operator=(const NonBlocking&) = delete;

private:
    int fd_;
    int flags_;
};

// Whether fd became ready for events before timeout_ms.
bool wait_for(int fd, short events, int timeout_ms)
{
    pollfd entry{fd, events, 0};
    int ready;
    do
        ready = ::poll(&entry, 1, timeout_ms);
    while (ready < 0 && errno == EINTR);
    return ready > 0;
}

// One side of the tunnel: its TLS session and socket.
struct Side {
    SSL* ssl;
    int fd;
};

// Writes all of data to side, waiting while its socket is full; whether it went.
bool write_all(const Side& side, const char* data, size_t size, int timeout_ms)
{
    while (size > 0) {
        size_t done = 0;
        int rc = SSL_write_ex(side.ssl, data, size, &done);
        if (rc == 1) {
            data += done;
            size -= done;
            continue;
        }
        int code = SSL_get_error(side.ssl, rc);
        short events = code == SSL_ERROR_WANT_WRITE ? POLLOUT : code == SSL_ERROR_WANT_READ ? POLLIN : 0;
        if (events == 0 || !wait_for(side.fd, events, timeout_ms)) {
            ERR_clear_error();
            return false;
        }
    }
    return true;
}

// What one pass of a side's bytes came to.
enum class Passed { moved, starved, ended };

// Moves what from has ready (one TLS record at most) to to. starved: OpenSSL holds no whole record (what it
// read ahead is partial), so only the socket can say when more comes.
Passed pass(const Side& from, const Side& to, int timeout_ms)
{
    char chunk[16 * 1024]; // a TLS record's most
    size_t got = 0;
    int rc = SSL_read_ex(from.ssl, chunk, sizeof chunk, &got);
    if (rc == 1)
        return write_all(to, chunk, got, timeout_ms) ? Passed::moved : Passed::ended;
    switch (SSL_get_error(from.ssl, rc)) {
    case SSL_ERROR_WANT_READ: // a partial record, or one without data
        return Passed::starved;
    case SSL_ERROR_WANT_WRITE: // TLS's own answer (a key update) waits on a full socket
        return wait_for(from.fd, POLLOUT, timeout_ms) ? Passed::moved : Passed::ended;
    default: // closed (close_notify or not) or failed
        ERR_clear_error();
        return Passed::ended;
    }
}

} // namespace

void tunnel(TlsStream& agent, TlsStream& upstream, std::string_view agent_early, std::string_view upstream_early,
            int idle_seconds)
{
    const Side sides[2] = {{agent.ssl(), SSL_get_fd(agent.ssl())}, {upstream.ssl(), SSL_get_fd(upstream.ssl())}};
    NonBlocking agent_socket(sides[0].fd);
    NonBlocking upstream_socket(sides[1].fd);
    const int timeout_ms = idle_seconds * 1000;
    if (!write_all(sides[1], agent_early.data(), agent_early.size(), timeout_ms) ||
        !write_all(sides[0], upstream_early.data(), upstream_early.size(), timeout_ms))
        return;
    // OpenSSL reads ahead: bytes it holds (decrypted, or records not yet decrypted) are off the socket, where
    // poll() cannot see them. A side is read while it holds some, until a read finds only part of a record.
    bool starved[2] = {false, false};
    auto holds = [&](int side) { return !starved[side] && SSL_has_pending(sides[side].ssl) == 1; };
    while (true) {
        bool held = holds(0) || holds(1);
        pollfd fds[2] = {{sides[0].fd, POLLIN, 0}, {sides[1].fd, POLLIN, 0}};
        int ready = ::poll(fds, 2, held ? 0 : timeout_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0 || (ready == 0 && !held))
            return; // idle too long
        for (int from = 0; from < 2; ++from) {
            if (fds[from].revents != 0)
                starved[from] = false;
            else if (!holds(from))
                continue;
            Passed passed = pass(sides[from], sides[1 - from], timeout_ms);
            if (passed == Passed::ended)
                return;
            starved[from] = passed == Passed::starved;
        }
    }
}

} // namespace cerberus::egress
