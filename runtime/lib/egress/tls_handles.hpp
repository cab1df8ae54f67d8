// SPDX-License-Identifier: Apache-2.0
// Owners of OpenSSL's objects (each freed by its own free function), and
// OpenSSL's errors turned into the code's one convention, cerberus::Error.
#pragma once

#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace cerberus::egress {

template <auto free_fn>
struct OpenSslFree {
    template <typename T>
    void operator()(T* object) const noexcept
    {
        free_fn(object);
    }
};

using SslPtr = std::unique_ptr<SSL, OpenSslFree<SSL_free>>;
using SslCtxPtr = std::unique_ptr<SSL_CTX, OpenSslFree<SSL_CTX_free>>;
using X509Ptr = std::unique_ptr<X509, OpenSslFree<X509_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpenSslFree<EVP_PKEY_free>>;
using BioPtr = std::unique_ptr<BIO, OpenSslFree<BIO_free_all>>;

// The reasons in the thread's OpenSSL error queue as one line ("certificate
// verify failed; ..."), the queue emptied; "" when it holds none.
std::string take_tls_errors();

// Throws Error("what: <the queue's errors>"), the queue emptied.
[[noreturn]] void throw_tls(const std::string& what);

// Returns ptr, or throws with the queue's errors when it is null.
template <typename T>
T* check_tls(T* ptr, const std::string& what)
{
    if (!ptr)
        throw_tls(what);
    return ptr;
}

// Throws with the queue's errors unless rc is 1, OpenSSL's success.
void check_tls(int rc, const std::string& what);

} // namespace cerberus::egress
