// SPDX-License-Identifier: Apache-2.0
// Decimal numbers as rules and records write them (ports, counts).
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace cerberus {

// The whole of text as a number no greater than max; nullopt for anything else (empty, a sign, other text).
inline std::optional<unsigned> parse_number(std::string_view text, unsigned max)
{
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max)
        return std::nullopt;
    return value;
}

} // namespace cerberus
