// SPDX-License-Identifier: Apache-2.0
// Durations as policies (ask_timeout) and `cerberus ask allow --for` take them.
#include "base/duration.hpp"

#include <doctest/doctest.h>

using namespace cerberus;
using namespace std::chrono_literals;

TEST_CASE("duration: a whole number and a unit")
{
    CHECK(parse_duration("500ms") == 500ms);
    CHECK(parse_duration("2s") == 2s);
    CHECK(parse_duration("10m") == 10min);
    CHECK(parse_duration("1h") == 1h);
    CHECK(parse_duration("1d") == 24h);
    for (const char* bad : {"", "s", "10", "0s", "-1s", "1.5s", "10 m", "10M", "1w", "s10", "99999999999999999999d"})
        CHECK_MESSAGE(!parse_duration(bad), bad);
}

TEST_CASE("duration: written in the largest unit that divides it")
{
    CHECK(duration_text(600s) == "10m");
    CHECK(duration_text(2s) == "2s");
    CHECK(duration_text(1500ms) == "1500ms");
    CHECK(duration_text(48h) == "2d");
    CHECK(parse_duration(duration_text(90s)) == 90s);
}
