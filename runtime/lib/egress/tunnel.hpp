// SPDX-License-Identifier: Apache-2.0
// After a WebSocket upgrade the server accepted (101), the agent's TLS
// connection and the proxy's own one to the server carry frames the proxy
// does not read: tunnel() passes the bytes both ways as they come.
#pragma once

#include "egress/tls_stream.hpp"

#include <string_view>

namespace cerberus::egress {

// Relays between agent and upstream until one side closes (a half-close ends
// both: a WebSocket closes by its own handshake, inside the frames), fails,
// or neither sends for idle_seconds. agent_early and upstream_early are what
// each side sent past the upgrade's header that the HTTP parser already read:
// sent on first. Waits in poll() on both sockets, never spinning; the sockets
// are non-blocking meanwhile, so a TLS record that is not data yet (a ticket,
// a partial record) never holds up the other direction.
void tunnel(TlsStream& agent, TlsStream& upstream, std::string_view agent_early, std::string_view upstream_early,
            int idle_seconds);

} // namespace cerberus::egress
