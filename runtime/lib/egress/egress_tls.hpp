// SPDX-License-Identifier: Apache-2.0
// The proxy's two TLS sides: the agent's handshake, admitted by its server
// name, and the proxy's own verified connection upstream.
#pragma once

#include "egress/egress_proxy.hpp"
#include "egress/tls_stream.hpp"

#include <optional>
#include <string>

namespace cerberus::egress {

// The agent's side: no session resumption (each handshake is judged by its
// name), ALPN h2 then http/1.1, the leaf chosen by the server name.
SslCtxPtr make_server_tls();
// The proxy's own: TLS 1.2 or later, the server's certificate verified
// against trust_file ("": the system's default paths).
SslCtxPtr make_upstream_tls(const std::string& trust_file);

// The server name admitted by the agent's handshake (lower case, no trailing
// dot), or nullopt when it was refused or failed, recorded as a "tls" record.
std::optional<std::string> accept_agent(TlsStream& agent, const ContainerContext& context,
                                        const Connection& connection);

// Whether the agent's handshake settled on HTTP/2 (ALPN "h2"); else it speaks HTTP/1.1.
bool agent_chose_h2(const TlsStream& agent);

// Completes a TLS handshake with the upstream server as server_name, its
// certificate verified for that name; on failure, why in words.
bool connect_verified(TlsStream& upstream, const std::string& server_name, std::string& why);

} // namespace cerberus::egress
