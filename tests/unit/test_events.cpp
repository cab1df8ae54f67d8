// SPDX-License-Identifier: Apache-2.0
// The JSON that `events` prints: runc's field names and order, which engines parse.
#include "container/events.hpp"

#include <doctest/doctest.h>

using namespace cerberus;

TEST_CASE("events::format puts type, id and data in runc's order and leaves out null data")
{
    CHECK(events::format("oom", "c1") == R"({"type":"oom","id":"c1"})");
    CHECK(events::format("stats", "c1", {{"pids", {{"current", 1}}}}) ==
          R"({"type":"stats","id":"c1","data":{"pids":{"current":1}}})");
}

TEST_CASE("events::stats_data has runc's stats shape")
{
    cgroups::Stats stats;
    stats.cpu.total_ns = 300;
    stats.cpu.user_ns = 200;
    stats.cpu.kernel_ns = 100;
    stats.memory.usage = 4096;
    stats.memory.limit = 8192;
    stats.memory.raw = {{"file", 1024}};
    stats.pids = {3, 10};
    auto data = events::stats_data(stats);

    std::vector<std::string> keys;
    for (const auto& [key, value] : data.items())
        keys.push_back(key);
    CHECK(keys == std::vector<std::string>{"cpu", "memory", "pids", "blkio", "hugetlb"});
    CHECK(data["cpu"]["usage"]["total"] == 300);
    CHECK(data["cpu"]["usage"]["user"] == 200);
    CHECK(data["cpu"]["usage"]["kernel"] == 100);
    CHECK_FALSE(data["cpu"]["usage"].contains("percpu")); // v2 has no per-cpu counters
    CHECK(data["cpu"]["throttling"]["throttledPeriods"] == 0);
    CHECK(data["memory"]["usage"]["usage"] == 4096);
    CHECK(data["memory"]["usage"]["limit"] == 8192);
    CHECK(data["memory"]["cache"] == 1024); // v2's "file"
    CHECK(data["memory"]["raw"]["file"] == 1024);
    CHECK(data["pids"]["current"] == 3);
    CHECK(data["pids"]["limit"] == 10);
}
