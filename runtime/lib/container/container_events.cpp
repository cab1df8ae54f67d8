// SPDX-License-Identifier: Apache-2.0
#include "container/events.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_oom.hpp"
#include "container/container.hpp"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <optional>

using json = nlohmann::ordered_json;

namespace cerberus::events {
namespace {

json memory_entry(uint64_t usage, uint64_t max, uint64_t limit, uint64_t failcnt)
{
    return {{"usage", usage}, {"max", max}, {"limit", limit}, {"failcnt", failcnt}};
}

struct Watched {
    state::ContainerState state;
    cgroups::Cgroup cgroup;
};

Watched open_running(const RuntimeOptions& rt, const std::string& id)
{
    container::Opened c = container::open(rt.root, id, state::Store::Access::read);
    c.require(state::Operation::watch);
    return {c.state, cgroups::Cgroup::open(c.state.cgroup_path)};
}

// A pollable fd and what to do when it turns readable.
struct Source {
    int fd;
    std::function<void()> on_readable;
};

} // namespace

std::string format(const std::string& type, const std::string& id, const json& data)
{
    json event = {{"type", type}, {"id", id}};
    if (!data.is_null())
        event["data"] = data;
    return event.dump();
}

json stats_data(const cgroups::Stats& stats)
{
    const auto& cpu = stats.cpu;
    json usage = {{"total", cpu.total_ns}, {"kernel", cpu.kernel_ns}, {"user", cpu.user_ns}};
    if (!cpu.percpu_ns.empty())
        usage["percpu"] = cpu.percpu_ns;
    const auto& memory = stats.memory;
    // Page cache: "cache" on v1, "file" on v2.
    uint64_t cache = memory.raw.count("cache") ? memory.raw.at("cache") : memory.raw.count("file") ? memory.raw.at("file") : 0;
    return {
        {"cpu",
         {{"usage", usage},
          {"throttling",
           {{"periods", cpu.periods}, {"throttledPeriods", cpu.throttled_periods}, {"throttledTime", cpu.throttled_ns}}}}},
        {"memory",
         {{"cache", cache},
          {"usage", memory_entry(memory.usage, memory.max_usage, memory.limit, memory.failcnt)},
          {"swap", memory_entry(memory.swap_usage, 0, memory.swap_limit, 0)},
          {"raw", memory.raw}}},
        {"pids", {{"current", stats.pids.current}, {"limit", stats.pids.limit}}},
        {"blkio", json::object()},
        {"hugetlb", json::object()},
    };
}

cgroups::Stats read_stats(const RuntimeOptions& rt, const std::string& id)
{
    return open_running(rt, id).cgroup.stats();
}

void stream(const RuntimeOptions& rt, const std::string& id, std::chrono::milliseconds interval,
            const std::function<void(const std::string& line)>& emit)
{
    Watched container = open_running(rt, id);
    // A pidfd turns readable when the init exits: the end of the stream.
    UniqueFd init(static_cast<int>(::syscall(SYS_pidfd_open, container.state.pid, 0)));
    if (!init || !state::process_matches(container.state))
        throw state::refusal(state::Operation::watch, state::Status::stopped, id);

    bool init_exited = false;
    std::vector<Source> sources = {{init.get(), [&] { init_exited = true; }}};
    std::optional<cgroups::OomWatcher> oom;
    try {
        oom.emplace(container.cgroup);
        sources.push_back({oom->fd(), [&] {
                               for (uint64_t n = oom->take(); n > 0; --n)
                                   emit(format("oom", id));
                           }});
    } catch (const Error& e) {
        spdlog::debug("events without oom notices: {}", e.what());
    }

    using clock = std::chrono::steady_clock;
    auto next_stats = clock::now() + interval;
    std::vector<pollfd> fds;
    for (const auto& source : sources)
        fds.push_back({source.fd, POLLIN, 0});
    while (!init_exited) {
        auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_stats - clock::now());
        int ready = ::poll(fds.data(), fds.size(), static_cast<int>(std::max<int64_t>(wait.count(), 0)));
        if (ready < 0 && errno != EINTR)
            throw_errno("poll");
        for (size_t i = 0; ready > 0 && i < fds.size(); ++i)
            if (fds[i].revents)
                sources[i].on_readable();
        if (!init_exited && clock::now() >= next_stats) {
            try {
                emit(format("stats", id, stats_data(container.cgroup.stats())));
            } catch (const Error& e) {
                spdlog::warn("reading stats of {}: {}", id, e.what());
            }
            next_stats += interval;
        }
    }
}

} // namespace cerberus::events
