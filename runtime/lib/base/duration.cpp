// SPDX-License-Identifier: Apache-2.0
#include "base/duration.hpp"

#include <charconv>
#include <cstdint>

namespace cerberus {
namespace {

struct Unit {
    std::string_view name;
    int64_t ms;
};
// Largest first, as duration_text picks them.
constexpr Unit units[] = {{"d", 86'400'000}, {"h", 3'600'000}, {"m", 60'000}, {"s", 1'000}, {"ms", 1}};

} // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text)
{
    int64_t count = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
    if (ec != std::errc() || end == text.data() || count <= 0)
        return std::nullopt;
    std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
    for (const auto& known : units)
        if (unit == known.name) {
            if (count > INT64_MAX / known.ms)
                return std::nullopt;
            return std::chrono::milliseconds(count * known.ms);
        }
    return std::nullopt;
}

std::string duration_text(std::chrono::milliseconds duration)
{
    if (duration.count() <= 0)
        return "0s";
    for (const auto& unit : units)
        if (duration.count() % unit.ms == 0)
            return std::to_string(duration.count() / unit.ms) + std::string(unit.name);
    return std::to_string(duration.count()) + "ms";
}

} // namespace cerberus
