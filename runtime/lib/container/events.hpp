// SPDX-License-Identifier: Apache-2.0
// events: a container's cgroup statistics and notices, one JSON object per
// line as runc prints them: {"type":"stats","id":"c1","data":{...}}.
#pragma once

#include "base/runtime_options.hpp"
#include "cgroup/cgroup_stats.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <string>

namespace cerberus::events {

// One event line, fields in runc's order; a null data is left out, as in runc's {"type":"oom","id":"c1"}.
std::string format(const std::string& type, const std::string& id, const nlohmann::ordered_json& data = nullptr);

// runc's stats data (types.Stats), its fields in runc's order: cpu,
// memory, pids, blkio, hugetlb.
nlohmann::ordered_json stats_data(const cgroups::Stats& stats);

// The counters of a container that is not stopped.
cgroups::Stats read_stats(const RuntimeOptions& rt, const std::string& id);

// Emits a stats event every interval and an "oom" event for each OOM kill
// in the container, until the container's init exits.
void stream(const RuntimeOptions& rt, const std::string& id, std::chrono::milliseconds interval,
            const std::function<void(const std::string& line)>& emit);

} // namespace cerberus::events
