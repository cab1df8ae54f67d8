// SPDX-License-Identifier: Apache-2.0
// An agent connection that chose HTTP/2 in ALPN, served by an nghttp2 server
// session: each stream is one request, judged as an HTTP/1.1 one is
// (request_judge.hpp: the same checks, decision, 403, record, credential and
// scrub), and when it passes sent on as an HTTP/1.1 request over a verified
// TLS connection of the proxy's own, one per stream at a time (an idle one is
// kept for the next). The request body streams up as its DATA frames come and
// the response body down as DATA frames, through the scrub; neither is held
// whole. Streams are served on the connection's one thread, so a response
// being read holds up the others (simple, not concurrent).
#pragma once

#include "egress/request_judge.hpp"
#include "egress/tls_stream.hpp"

namespace cerberus::egress {

// Serves the connection until the agent ends it, fails, or is idle too long.
// Throws Error when nghttp2 cannot make its session.
void serve_h2(const Judge& judge, TlsStream& agent);

} // namespace cerberus::egress
