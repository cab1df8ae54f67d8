// SPDX-License-Identifier: Apache-2.0
// `cerberus dashboard`: one page (dashboard/page/, embedded in the
// binary) and a small read-only JSON and Server-Sent Events API over
// DashboardHub, served by cpp-httplib. Loopback by default; any other
// address needs a bearer token. No CORS; strict content security policy.
#pragma once

#include <string>
#include <string_view>

namespace cerberus::dashboard {

struct DashboardOptions {
    std::string listen = "127.0.0.1:7070"; // ADDRESS:PORT, [IPV6]:PORT
    std::string audit_dir;
    std::string token; // empty: none (loopback only)
};

struct ListenAddress {
    std::string host; // numeric, without brackets
    int port = 0;
    bool loopback = false;
};

// "127.0.0.1:7070", "[::1]:7070", "0.0.0.0:7070"; throws EINVAL naming --listen.
ListenAddress parse_listen(const std::string& text);

// Compares in time that depends only on the expected token's length.
bool tokens_equal(std::string_view given, std::string_view expected);

// Checks the options (a non-loopback address needs a token of 16 characters
// or more), binds, prints where it listens and serves until SIGINT or SIGTERM.
int serve_dashboard(const DashboardOptions& options);

} // namespace cerberus::dashboard
