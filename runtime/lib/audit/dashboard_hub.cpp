// SPDX-License-Identifier: Apache-2.0
#include "audit/dashboard_hub.hpp"

#include "audit/audit.hpp"
#include "audit/audit_registry.hpp"
#include "base/files.hpp"

#include <time.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>

namespace cerberus::audit {
namespace {

using nlohmann::json;

constexpr size_t feed_kept = 10000;           // records kept for the live feed
constexpr auto follow_every = std::chrono::milliseconds(100);
constexpr int64_t minutes_shown = 60;

// Minutes since the epoch of an RFC 3339 UTC time, nullopt when it is not one.
std::optional<int64_t> minute_of(const std::string& time)
{
    struct tm tm {};
    const char* end = strptime(time.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end)
        return std::nullopt;
    return static_cast<int64_t>(timegm(&tm)) / 60;
}

std::vector<std::string> trails_in(const std::string& dir_path)
{
    std::vector<std::string> trails;
    for (const auto& entry : files::list_dir(dir_path)) {
        const std::string& name = entry.name;
        if (name.size() > 6 && name.compare(name.size() - 6, 6, ".jsonl") == 0 && name[0] != '.')
            trails.push_back(dir_path + "/" + name);
    }
    return trails;
}

} // namespace

DashboardHub::DashboardHub(std::string audit_dir, StatusOf status_of)
    : audit_dir_(std::move(audit_dir)), status_of_(std::move(status_of))
{
}

DashboardHub::~DashboardHub()
{
    stop();
    if (thread_.joinable())
        thread_.join();
}

void DashboardHub::start()
{
    poll();
    thread_ = std::thread([this] { run(); });
}

void DashboardHub::stop()
{
    std::lock_guard lock(mutex_);
    stopping_ = true;
    arrived_.notify_all();
}

void DashboardHub::run()
{
    for (;;) {
        {
            std::unique_lock lock(mutex_);
            if (arrived_.wait_for(lock, follow_every, [this] { return stopping_; }))
                return;
        }
        try {
            poll();
        } catch (const std::exception& e) {
            spdlog::warn("dashboard: {}", e.what());
        }
    }
}

// Trails of registered containers (wherever their audit dir is) and those in ours.
void DashboardHub::discover()
{
    auto registry = read_registry();
    std::lock_guard lock(mutex_);
    for (auto& [path, followed] : followed_)
        followed.live = false;
    for (const auto& entry : registry) {
        if (!entry.brokered.is_null())
            continue; // a brokered tool's call: its container's entry is the one followed
        auto& followed = followed_[entry.trail];
        if (!followed.tail)
            followed.tail = std::make_unique<TrailTail>(entry.trail);
        followed.id = entry.id;
        followed.live = true;
        followed.cgroup_id = entry.cgroup_id;
        followed.root = entry.root;
        followed.enforcement = entry.enforcement;
        followed.policy = entry.policy;
    }
    for (const auto& path : trails_in(audit_dir_)) {
        auto& followed = followed_[path];
        if (followed.tail)
            continue;
        followed.tail = std::make_unique<TrailTail>(path);
        std::string name = path.substr(path.rfind('/') + 1);
        followed.id = name.substr(0, name.size() - 6);
    }
}

void DashboardHub::poll()
{
    discover();
    // Only this thread reads the tails; handlers see the counters under the lock.
    std::vector<std::pair<Followed*, std::string>> lines;
    {
        std::lock_guard lock(mutex_);
        for (auto& [path, followed] : followed_) {
            try {
                followed.tail->read_new([&](const std::string& line) { lines.emplace_back(&followed, line); });
            } catch (const std::exception& e) {
                spdlog::warn("dashboard: {}", e.what());
            }
        }
        for (auto& [followed, line] : lines)
            take(*followed, line);
        while (feed_.size() > feed_kept)
            feed_.pop_front();
    }
    if (!lines.empty())
        arrived_.notify_all();
}

// Called with the lock held.
void DashboardHub::take(Followed& followed, const std::string& line)
{
    json record = json::parse(line, nullptr, false);
    if (!record.is_object())
        return;
    std::string type = record.value("type", "");
    if (type == "denial") {
        (record.value("verdict", "") == "audit" ? followed.audits : followed.denials)++;
        followed.last = record;
        if (auto minute = minute_of(record.value("time", ""))) {
            ++followed.per_minute[*minute];
            while (followed.per_minute.size() > 2 * minutes_shown)
                followed.per_minute.erase(followed.per_minute.begin());
        }
    } else if (type == "lost" && record.contains("total") && record["total"].is_number_unsigned()) {
        followed.lost = std::max(followed.lost, record["total"].get<uint64_t>());
    } else if (type == "start") {
        followed.started = record.value("time", "");
        if (!followed.live) { // a past run: its policy comes from its start record
            followed.enforcement = record.value("enforcement", "");
            followed.policy = record.value("policy", json::object());
        }
    }
    feed_.push_back({++seq_, line});
}

json DashboardHub::containers() const
{
    struct Row {
        json view;
        std::string root;
        uint64_t cgroup_id;
    };
    std::vector<Row> rows;
    {
        std::lock_guard lock(mutex_);
        time_t now = time(nullptr);
        int64_t first_minute = static_cast<int64_t>(now) / 60 - minutes_shown + 1;
        for (const auto& [path, f] : followed_) {
            json per_minute = json::array();
            for (auto it = f.per_minute.lower_bound(first_minute); it != f.per_minute.end(); ++it)
                per_minute.push_back({it->first, it->second});
            json view = {{"id", f.id},           {"trail", path},          {"live", f.live},
                         {"enforcement", f.enforcement}, {"policy", f.policy},     {"denials", f.denials},
                         {"audits", f.audits},   {"lost", f.lost},         {"last", f.last},
                         {"started", f.started}, {"per_minute", per_minute}};
            rows.push_back({std::move(view), f.live ? f.root : "", f.cgroup_id});
        }
    }
    json list = json::array();
    for (auto& row : rows) {
        // Outside the lock: the state dir and the kernel map are read per request.
        row.view["status"] = row.view["live"].get<bool>() ? status_of_(row.root, row.view["id"]) : "deleted";
        if (row.view["live"].get<bool>()) {
            row.view["cgroup_id"] = row.cgroup_id; // the server adds what the DNS gate admitted for it
            if (auto lost = events_lost(row.cgroup_id))
                row.view["lost"] = std::max(*lost, row.view["lost"].get<uint64_t>());
        }
        list.push_back(std::move(row.view));
    }
    std::sort(list.begin(), list.end(), [](const json& a, const json& b) {
        return std::make_tuple(!a["live"].get<bool>(), a["id"].get<std::string>()) <
               std::make_tuple(!b["live"].get<bool>(), b["id"].get<std::string>());
    });
    return list;
}

std::optional<json> DashboardHub::trail(const std::string& id, size_t limit) const
{
    std::string path;
    {
        std::lock_guard lock(mutex_);
        for (const auto& [trail_path, f] : followed_)
            if (f.id == id && (path.empty() || f.live))
                path = trail_path;
    }
    if (path.empty())
        return std::nullopt;
    std::deque<json> kept;
    size_t total = 0;
    TrailTail tail(path);
    tail.read_new([&](const std::string& line) {
        json record = json::parse(line, nullptr, false);
        if (!record.is_object())
            return;
        ++total;
        kept.push_back(std::move(record));
        if (kept.size() > limit)
            kept.pop_front();
    });
    return json{{"id", id}, {"total", total}, {"records", json(std::vector<json>(kept.begin(), kept.end()))}};
}

std::vector<DashboardHub::Numbered> DashboardHub::recent(size_t limit) const
{
    std::lock_guard lock(mutex_);
    size_t skip = feed_.size() > limit ? feed_.size() - limit : 0;
    return {feed_.begin() + static_cast<std::ptrdiff_t>(skip), feed_.end()};
}

std::vector<DashboardHub::Numbered> DashboardHub::wait_records(uint64_t after, std::chrono::milliseconds timeout) const
{
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, timeout, [&] { return stopping_ || seq_ > after; });
    std::vector<Numbered> found;
    if (stopping_)
        return found;
    for (auto it = std::lower_bound(feed_.begin(), feed_.end(), after + 1,
                                    [](const Numbered& n, uint64_t seq) { return n.seq < seq; });
         it != feed_.end(); ++it)
        found.push_back(*it);
    return found;
}

bool DashboardHub::stopped() const
{
    std::lock_guard lock(mutex_);
    return stopping_;
}

uint64_t DashboardHub::last_seq() const
{
    std::lock_guard lock(mutex_);
    return seq_;
}

} // namespace cerberus::audit
