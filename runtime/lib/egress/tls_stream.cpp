// SPDX-License-Identifier: Apache-2.0
#include "egress/tls_stream.hpp"

#include "base/error.hpp"

#include <boost/asio/error.hpp>

#include <openssl/err.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

namespace cerberus::egress {

TlsStream::TlsStream(SSL_CTX* ctx, UniqueFd fd)
    : fd_(std::move(fd)), ssl_(check_tls(SSL_new(ctx), "making a TLS session"))
{
    check_tls(SSL_set_fd(ssl_.get(), fd_.get()), "attaching the TLS session to its socket");
    // A message goes out in several writes (a header, then its body): under Nagle's algorithm each after the
    // first waits for the ACK of the one before, which the peer delays up to 40 ms on a keep-alive connection.
    // Not a TCP socket (a test's socketpair): nothing to turn off.
    int on = 1;
    ::setsockopt(fd_.get(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

bool TlsStream::accept()
{
    return handshake(SSL_accept(ssl_.get()));
}

bool TlsStream::connect()
{
    return handshake(SSL_connect(ssl_.get()));
}

bool TlsStream::handshake(int rc)
{
    if (rc == 1)
        return true;
    int code = SSL_get_error(ssl_.get(), rc);
    std::string errors = take_tls_errors();
    if (!errors.empty())
        error_ = errors;
    else if (code == SSL_ERROR_SYSCALL && errno != 0)
        error_ = errno_text(errno);
    else
        error_ = "the peer closed the connection";
    return false;
}

void TlsStream::shutdown() noexcept
{
    SSL_shutdown(ssl_.get());
    ERR_clear_error();
}

bool TlsStream::has_input() const
{
    if (SSL_has_pending(ssl_.get()) == 1)
        return true;
    pollfd entry{fd_.get(), POLLIN, 0};
    return ::poll(&entry, 1, 0) > 0;
}

size_t TlsStream::transfer(void* data, size_t size, bool write, boost::system::error_code& ec)
{
    ec = {};
    if (size == 0)
        return 0;
    size_t done = 0;
    errno = 0;
    int rc = write ? SSL_write_ex(ssl_.get(), data, size, &done) : SSL_read_ex(ssl_.get(), data, size, &done);
    if (rc == 1)
        return done;
    int code = SSL_get_error(ssl_.get(), rc);
    std::string errors = take_tls_errors();
    if (code == SSL_ERROR_ZERO_RETURN) {
        ec = boost::asio::error::eof;
        return 0;
    }
    error_ = !errors.empty() ? errors : errno != 0 ? errno_text(errno) : "the peer closed the connection";
    ec = errno != 0 ? boost::system::error_code(errno, boost::system::system_category())
                    : boost::system::error_code(boost::asio::error::connection_reset);
    return 0;
}

} // namespace cerberus::egress
