// SPDX-License-Identifier: Apache-2.0
// A blocking TLS connection (an SSL over a socket it owns) as Boost.Beast's
// SyncReadStream and SyncWriteStream, so Beast's HTTP/1.1 parser and
// serializer read and write through OpenSSL directly.
#pragma once

#include "base/fd.hpp"
#include "egress/tls_handles.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <string>

namespace cerberus::egress {

class TlsStream {
public:
    // An SSL of ctx over fd, not yet handshaken.
    TlsStream(SSL_CTX* ctx, UniqueFd fd);

    SSL* ssl() const { return ssl_.get(); }
    // The TLS handshake as server or client: whether it completed. On failure
    // error() says why.
    bool accept();
    bool connect();
    // Why the last operation failed, in words.
    const std::string& error() const { return error_; }
    // Sends close_notify (best effort: the peer may be gone).
    void shutdown() noexcept;
    // Whether a read would find something at once: bytes OpenSSL holds, or bytes (or the peer's close) on the
    // socket.
    bool has_input() const;

    template <typename MutableBuffers>
    size_t read_some(const MutableBuffers& buffers, boost::system::error_code& ec)
    {
        auto buffer = first_nonempty<boost::asio::mutable_buffer>(buffers);
        return transfer(buffer.data(), buffer.size(), false, ec);
    }
    // Beast's serializer hands a header over as a buffer per line, and the start of a body after it: they go
    // out gathered, as one TLS record (and one TCP segment) rather than a record each, which the peer would take
    // one by one.
    template <typename ConstBuffers>
    size_t write_some(const ConstBuffers& buffers, boost::system::error_code& ec)
    {
        std::array<char, gather_size> gathered;
        size_t used = 0;
        for (auto it = boost::asio::buffer_sequence_begin(buffers);
             it != boost::asio::buffer_sequence_end(buffers) && used < gathered.size(); ++it) {
            boost::asio::const_buffer buffer(*it);
            if (used == 0 && buffer.size() >= gathered.size()) // a large body chunk: sent as it is
                return transfer(const_cast<void*>(buffer.data()), buffer.size(), true, ec);
            size_t taken = std::min(buffer.size(), gathered.size() - used);
            std::memcpy(gathered.data() + used, buffer.data(), taken);
            used += taken;
        }
        return transfer(gathered.data(), used, true, ec);
    }
    template <typename MutableBuffers>
    size_t read_some(const MutableBuffers& buffers)
    {
        return or_throw([&](auto& ec) { return read_some(buffers, ec); });
    }
    template <typename ConstBuffers>
    size_t write_some(const ConstBuffers& buffers)
    {
        return or_throw([&](auto& ec) { return write_some(buffers, ec); });
    }

private:
    static constexpr size_t gather_size = 16 * 1024; // a TLS record's largest payload
    template <typename Buffer, typename Buffers>
    static Buffer first_nonempty(const Buffers& buffers)
    {
        for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers);
             ++it)
            if (Buffer(*it).size() > 0)
                return Buffer(*it);
        return Buffer();
    }
    size_t transfer(void* data, size_t size, bool write, boost::system::error_code& ec);
    template <typename Fn>
    size_t or_throw(Fn&& fn)
    {
        boost::system::error_code ec;
        size_t n = fn(ec);
        if (ec)
            throw boost::system::system_error(ec);
        return n;
    }
    bool handshake(int rc);

    UniqueFd fd_;
    SslPtr ssl_;
    std::string error_;
};

} // namespace cerberus::egress
