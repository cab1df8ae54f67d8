// SPDX-License-Identifier: Apache-2.0
#include "egress/tls_handles.hpp"

#include "base/error.hpp"

#include <openssl/err.h>

namespace cerberus::egress {

std::string take_tls_errors()
{
    std::string text;
    while (unsigned long code = ERR_get_error()) {
        const char* reason = ERR_reason_error_string(code);
        std::string entry = reason ? reason : "error " + std::to_string(code);
        text += (text.empty() ? "" : "; ") + entry;
    }
    return text;
}

void throw_tls(const std::string& what)
{
    std::string errors = take_tls_errors();
    throw Error(what + ": " + (errors.empty() ? "unknown TLS error" : errors));
}

void check_tls(int rc, const std::string& what)
{
    if (rc != 1)
        throw_tls(what);
}

} // namespace cerberus::egress
