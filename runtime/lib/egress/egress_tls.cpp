// SPDX-License-Identifier: Apache-2.0
#include "egress/egress_tls.hpp"

#include "base/error.hpp"
#include "base/text.hpp"
#include "policy/policy_http.hpp"

#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <string_view>

namespace cerberus::egress {
namespace {

const unsigned char alpn_http1[] = "\x08http/1.1";
// The agent's side: HTTP/2 first (h2_session.hpp), HTTP/1.1 for the clients that offer only it.
const unsigned char alpn_agent[] = "\x02h2\x08http/1.1";

// What the server-name callback learns, for the handshake that asked.
struct Handshake {
    const ContainerContext& context;
    const Connection& connection;
    std::string server_name; // as sent
    std::string refusal; // why the name was refused; "" when admitted
};

// Why the handshake's name may not pass, "" when it may.
std::string refusal_of(const Handshake& handshake)
{
    const std::string& name = handshake.server_name;
    uint16_t port = handshake.connection.original.port;
    if (name.empty())
        return "no server name (SNI) in the TLS ClientHello";
    if (!policy::http_host_allowed(handshake.context.rules, name, port))
        return "the server name " + name + ":" + std::to_string(port) + " is not in allowed_http";
    if (!handshake.connection.admitted(canonical_host_name(name))) // as the gate keeps names
        return "the server name " + name +
               " was not admitted by the DNS gate for the address dialled (domain fronting?)";
    return "";
}

// Presents the leaf for the admitted name.
void use_leaf(SSL* ssl, const Handshake& handshake)
{
    auto leaf = handshake.context.ca->leaf_for(canonical_host_name(handshake.server_name));
    check_tls(SSL_use_certificate(ssl, leaf->certificate.get()), "presenting the leaf certificate");
    check_tls(SSL_use_PrivateKey(ssl, leaf->key.get()), "presenting the leaf key");
}

// The server-name callback: OpenSSL calls it for every ClientHello, with a name or without.
int on_server_name(SSL* ssl, int* alert, void*)
{
    auto* handshake = static_cast<Handshake*>(SSL_get_app_data(ssl));
    const char* name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    handshake->server_name = name ? name : "";
    handshake->refusal = refusal_of(*handshake);
    if (handshake->refusal.empty()) {
        try {
            use_leaf(ssl, *handshake);
            return SSL_TLSEXT_ERR_OK;
        } catch (const std::exception& e) {
            handshake->refusal = e.what();
        }
    }
    *alert = SSL_AD_ACCESS_DENIED;
    return SSL_TLSEXT_ERR_ALERT_FATAL;
}

int on_alpn(SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* offered,
            unsigned int offered_len, void*)
{
    unsigned char* chosen = nullptr;
    if (SSL_select_next_proto(&chosen, out_len, alpn_agent, sizeof alpn_agent - 1, offered, offered_len) !=
        OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

// Reads ahead: a TLS record's header and body, and whatever else has come, in one read from the socket
// rather than two reads a record. (What OpenSSL holds read is out of a poll's sight: the requests are read
// blocking, and the WebSocket tunnel, which polls, asks SSL_has_pending first.)
void read_ahead(SSL_CTX* ctx)
{
    SSL_CTX_set_read_ahead(ctx, 1);
    SSL_CTX_set_default_read_buffer_len(ctx, 64 * 1024);
}

void record_refusal(const Connection& connection, const std::string& server_name, const std::string& reason)
{
    HttpRecord record;
    record.kind = "tls";
    record.server_name = server_name;
    record.reason = reason;
    connection.record(record);
}

} // namespace

SslCtxPtr make_server_tls()
{
    SslCtxPtr ctx(check_tls(SSL_CTX_new(TLS_server_method()), "making the proxy's server TLS context"));
    check_tls(SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION), "setting the TLS version");
    SSL_CTX_set_options(ctx.get(), SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
    SSL_CTX_set_tlsext_servername_callback(ctx.get(), on_server_name);
    SSL_CTX_set_alpn_select_cb(ctx.get(), on_alpn, nullptr);
    read_ahead(ctx.get());
    return ctx;
}

SslCtxPtr make_upstream_tls(const std::string& trust_file)
{
    SslCtxPtr ctx(check_tls(SSL_CTX_new(TLS_client_method()), "making the proxy's upstream TLS context"));
    check_tls(SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION), "setting the TLS version");
    // Servers often close without close_notify; HTTP's own framing tells a cut response.
    SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (trust_file.empty())
        check_tls(SSL_CTX_set_default_verify_paths(ctx.get()), "loading the system's trusted certificates");
    else
        check_tls(SSL_CTX_load_verify_locations(ctx.get(), trust_file.c_str(), nullptr),
                  "loading the upstream trust file " + trust_file);
    if (SSL_CTX_set_alpn_protos(ctx.get(), alpn_http1, sizeof alpn_http1 - 1) != 0)
        throw_tls("offering http/1.1 upstream");
    read_ahead(ctx.get());
    return ctx;
}

std::optional<std::string> accept_agent(TlsStream& agent, const ContainerContext& context,
                                        const Connection& connection)
{
    Handshake handshake{context, connection, "", ""};
    SSL_set_app_data(agent.ssl(), &handshake);
    bool completed = agent.accept();
    SSL_set_app_data(agent.ssl(), nullptr);
    if (!handshake.refusal.empty()) {
        record_refusal(connection, handshake.server_name, handshake.refusal);
        return std::nullopt;
    }
    if (!completed) {
        // An agent that does not trust the container's CA (one pinning its own) ends here.
        record_refusal(connection, handshake.server_name, "the TLS handshake failed: " + agent.error());
        return std::nullopt;
    }
    return canonical_host_name(handshake.server_name);
}

bool agent_chose_h2(const TlsStream& agent)
{
    const unsigned char* chosen = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(agent.ssl(), &chosen, &length);
    return std::string_view(reinterpret_cast<const char*>(chosen), length) == "h2";
}

bool connect_verified(TlsStream& upstream, const std::string& server_name, std::string& why)
{
    SSL* ssl = upstream.ssl();
    check_tls(SSL_set_tlsext_host_name(ssl, server_name.c_str()) == 1 ? 1 : 0, "setting the server name");
    check_tls(SSL_set1_host(ssl, server_name.c_str()), "setting the name to verify");
    if (upstream.connect())
        return true;
    long verified = SSL_get_verify_result(ssl);
    why = verified != X509_V_OK ? std::string("the upstream certificate failed verification: ") +
                                      X509_verify_cert_error_string(verified)
                                : "the upstream TLS handshake failed: " + upstream.error();
    return false;
}

} // namespace cerberus::egress
