// SPDX-License-Identifier: Apache-2.0
// Numbers as rules, records and the kernel's files write them: the whole text or nothing.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace cerberus {

// The whole of text as a T in base; nullopt for anything else (empty, trailing text, out of T's range).
template <typename T> std::optional<T> parse_whole(std::string_view text, int base = 10)
{
    T value{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

// The whole of text as a decimal number no greater than max (ports, counts); a sign is refused.
inline std::optional<unsigned> parse_number(std::string_view text, unsigned max)
{
    auto value = parse_whole<unsigned>(text);
    if (!value || *value > max)
        return std::nullopt;
    return value;
}

} // namespace cerberus
