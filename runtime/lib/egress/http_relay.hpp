// SPDX-License-Identifier: Apache-2.0
// Streams one HTTP/1.1 message from a parser that has read its header to the
// other side through Beast's serializer, the body in chunks as it arrives (a
// body of any size is never held whole), scrubbed of a secret on the way when asked.
#pragma once

#include "egress/secret_scrub.hpp"
#include "egress/tls_stream.hpp"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <limits>

namespace cerberus::egress {

namespace http = boost::beast::http;

using ResponseParser = http::response_parser<http::buffer_body>;

// A message's header is read up to 64 KiB; its body is streamed, never held: no limit. (Not boost::none:
// Beast 1.74 compares a Content-Length with an empty limit as larger.)
template <bool is_request>
void limit(http::parser<is_request, http::buffer_body>& parser)
{
    parser.header_limit(64 * 1024);
    parser.body_limit(std::numeric_limits<uint64_t>::max());
}

// Reads the body of parser's message into its buffer: what input has at once, but waiting for a first part
// (what buffer holds past it is parsed by the next call). A body that comes in parts spaced in time
// (server-sent events) goes on part by part, a bulk one in full buffers. need_buffer (the buffer full) is no
// error here.
template <bool is_request>
void read_body_part(TlsStream& input, boost::beast::flat_buffer& buffer,
                    http::parser<is_request, http::buffer_body>& parser, boost::system::error_code& ec)
{
    auto& body = parser.get().body();
    const size_t room = body.size;
    do
        http::read_some(input, buffer, parser, ec);
    while (!ec && !parser.is_done() && body.size > 0 && (body.size == room || input.has_input()));
    if (ec == http::error::need_buffer)
        ec = {};
}

// Which side a relay broke on.
enum class RelayEnd { done, reading, writing };

// Writes parser's message (its header read and maybe changed) to output, then
// its body as read from input. header_only: the answer to a HEAD, no body.
// scrub: the body passes through it (the header is the caller's to scrub).
// The header goes out with the body's first part when that is in hand already (one TLS record, one write, one
// wake-up of the peer for a small message).
template <bool is_request>
RelayEnd relay(TlsStream& output, TlsStream& input, boost::beast::flat_buffer& buffer,
               http::parser<is_request, http::buffer_body>& parser, bool header_only = false,
               SecretScrub* scrub = nullptr)
{
    auto& message = parser.get();
    http::serializer<is_request, http::buffer_body> serializer{message};
    boost::system::error_code ec;
    if (header_only) {
        http::write_header(output, serializer, ec);
        return ec ? RelayEnd::writing : RelayEnd::done;
    }
    // Without a body in hand the header goes alone: the agent learns the status before a body that is slow to
    // come (a long poll).
    if (!parser.is_done() && buffer.size() == 0 && !input.has_input()) {
        http::write_header(output, serializer, ec);
        if (ec)
            return RelayEnd::writing;
    }
    char chunk[64 * 1024];
    std::string scrubbed;
    do {
        size_t got = 0;
        if (!parser.is_done()) {
            message.body().data = chunk;
            message.body().size = sizeof chunk;
            read_body_part(input, buffer, parser, ec);
            if (ec)
                return RelayEnd::reading;
            got = sizeof chunk - message.body().size;
        }
        message.body().data = got ? chunk : nullptr;
        message.body().size = got;
        if (scrub) {
            scrubbed.assign(scrub->feed({chunk, got}));
            if (parser.is_done())
                scrubbed.append(scrub->finish());
            message.body().data = scrubbed.empty() ? nullptr : scrubbed.data();
            message.body().size = scrubbed.size();
        }
        message.body().more = !parser.is_done();
        if (message.body().size == 0 && message.body().more) { // all held back by the scrub
            if (!serializer.is_header_done())
                http::write_header(output, serializer, ec);
        } else {
            http::write(output, serializer, ec);
        }
        if (ec && ec != http::error::need_buffer)
            return RelayEnd::writing;
    } while (!serializer.is_done());
    return RelayEnd::done;
}

} // namespace cerberus::egress
