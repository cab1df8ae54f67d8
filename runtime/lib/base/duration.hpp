// SPDX-License-Identifier: Apache-2.0
// Durations as people write them in policies and on the command line: a
// whole number and a unit, "500ms", "2s", "10m", "1h", "1d".
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace cerberus {

// nullopt for text that is not one (no number, no unit, another unit, zero, overflow).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

// The largest unit that divides it: "10m", "2s", "1500ms".
std::string duration_text(std::chrono::milliseconds duration);

} // namespace cerberus
