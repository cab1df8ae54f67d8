// SPDX-License-Identifier: Apache-2.0
// Text as the protocols compare it: host names and HTTP field names fold ASCII case.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

namespace cerberus {

inline std::string ascii_lower(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

// A host name as the policy keeps it, queries carry it and the gate and the proxy compare it: lower case, no
// trailing dot.
inline std::string canonical_host_name(std::string name)
{
    if (!name.empty() && name.back() == '.')
        name.pop_back();
    return ascii_lower(std::move(name));
}

} // namespace cerberus
