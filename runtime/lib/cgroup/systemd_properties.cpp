// SPDX-License-Identifier: Apache-2.0
#include "cgroup/systemd_properties.hpp"

#include "base/error.hpp"
#include "base/numbers.hpp"
#include "cgroup/cgroup_translate.hpp"
#include "cgroup/device_filter.hpp"

#include <map>
#include <optional>

namespace cerberus::cgroups::systemd {

namespace {

constexpr uint64_t usec_per_sec = 1'000'000;
constexpr uint64_t default_cpu_period = 100'000; // the kernel's, in µs
constexpr uint64_t quota_step = 10'000;          // systemd keeps CPUQuota= as a percentage: 10 ms a second

Error invalid(const std::string& field, const std::string& message)
{
    return Error("linux.resources." + field + ": " + message, EINVAL);
}

uint64_t limit_or_infinity(int64_t value)
{
    return value < 0 ? infinity : static_cast<uint64_t>(value);
}

std::string trimmed(const std::string& text)
{
    size_t first = text.find_first_not_of(" \t\n");
    size_t last = text.find_last_not_of(" \t\n");
    return first == std::string::npos ? "" : text.substr(first, last - first + 1);
}

// A unified value that is a number or "max".
uint64_t unified_limit(const std::string& key, const std::string& value)
{
    if (value == "max")
        return infinity;
    if (auto number = parse_whole<uint64_t>(value))
        return *number;
    throw invalid("unified[\"" + key + "\"]", "\"" + value + "\" is neither a number nor \"max\"");
}

void add_quota(std::vector<UnitProperty>& out, int64_t quota, uint64_t period)
{
    out.push_back({"CPUQuotaPerSecUSec", quota_per_second(quota, period)});
    if (period != 0)
        out.push_back({"CPUQuotaPeriodUSec", period});
}

// cpu.max as "QUOTA [PERIOD]", QUOTA a number or "max".
void add_unified_cpu_max(std::vector<UnitProperty>& out, const std::string& value)
{
    const std::string field = "unified[\"cpu.max\"]";
    size_t space = value.find_first_of(" \t");
    std::string quota_text = value.substr(0, space);
    std::string period_text = space == std::string::npos ? "" : trimmed(value.substr(space));
    int64_t quota = -1;
    if (quota_text != "max") {
        auto number = parse_whole<uint64_t>(quota_text);
        if (!number || *number == 0 || *number > INT64_MAX)
            throw invalid(field, "quota \"" + quota_text + "\" is neither a positive number nor \"max\"");
        quota = static_cast<int64_t>(*number);
    }
    uint64_t period = 0;
    if (!period_text.empty()) {
        auto number = parse_whole<uint64_t>(period_text);
        if (!number || *number == 0)
            throw invalid(field, "period \"" + period_text + "\" is not a positive number");
        period = *number;
    }
    add_quota(out, quota, period);
}

// The unified keys systemd owns: each becomes its property and leaves the files.
bool take_unified(std::vector<UnitProperty>& out, const std::string& key, const std::string& raw)
{
    static const std::map<std::string, std::string> limits = {
        {"memory.high", "MemoryHigh"}, {"memory.low", "MemoryLow"},           {"memory.min", "MemoryMin"},
        {"memory.max", "MemoryMax"},   {"memory.swap.max", "MemorySwapMax"}, {"pids.max", "TasksMax"},
    };
    std::string value = trimmed(raw);
    if (auto limit = limits.find(key); limit != limits.end()) {
        out.push_back({limit->second, unified_limit(key, value)});
    } else if (key == "cpu.weight") {
        auto weight = parse_whole<uint64_t>(value);
        if (!weight || *weight < 1 || *weight > 10000)
            throw invalid("unified[\"cpu.weight\"]", "\"" + value + "\" is not a weight from 1 to 10000");
        out.push_back({"CPUWeight", *weight});
    } else if (key == "cpu.max") {
        add_unified_cpu_max(out, value);
    } else if (key == "cpuset.cpus") {
        out.push_back({"AllowedCPUs", cpu_list_mask(value, "unified[\"cpuset.cpus\"]")});
    } else if (key == "cpuset.mems") {
        out.push_back({"AllowedMemoryNodes", cpu_list_mask(value, "unified[\"cpuset.mems\"]")});
    } else {
        return false;
    }
    return true;
}

void take_memory(std::vector<UnitProperty>& out, spec::MemoryResources& memory)
{
    int64_t limit = memory.limit.value_or(0);
    if (limit != 0)
        out.push_back({"MemoryMax", limit_or_infinity(limit)});
    if (memory.reservation.value_or(0) != 0)
        out.push_back({"MemoryLow", limit_or_infinity(*memory.reservation)});
    if (auto swap = v2_swap_limit(memory.swap.value_or(0), limit))
        out.push_back({"MemorySwapMax", limit_or_infinity(*swap)});
    memory.limit.reset();
    memory.reservation.reset();
    memory.swap.reset();
}

void take_cpu(std::vector<UnitProperty>& out, spec::CpuResources& cpu)
{
    if (cpu.shares.value_or(0) != 0)
        out.push_back({"CPUWeight", shares_to_weight(*cpu.shares)});
    if (cpu.quota.value_or(0) != 0 || cpu.period.value_or(0) != 0)
        add_quota(out, cpu.quota.value_or(0), cpu.period.value_or(0));
    if (!cpu.cpus.empty())
        out.push_back({"AllowedCPUs", cpu_list_mask(cpu.cpus, "cpu.cpus")});
    if (!cpu.mems.empty())
        out.push_back({"AllowedMemoryNodes", cpu_list_mask(cpu.mems, "cpu.mems")});
    cpu.shares.reset();
    cpu.quota.reset();
    cpu.period.reset();
    cpu.cpus.clear();
    cpu.mems.clear();
}

bool wildcard(const std::optional<int64_t>& number)
{
    return !number || *number < 0;
}

// One DeviceAllow entry per device type of an allow rule, or nothing when systemd
// cannot name its devices ("*:N").
std::optional<DeviceAllowList> allow_entries(const spec::DeviceRule& rule)
{
    if (wildcard(rule.major) && !wildcard(rule.minor))
        return std::nullopt;
    DeviceAllowList out;
    for (const char* type : {"c", "b"}) {
        if (rule.type != "a" && rule.type != type)
            continue;
        std::string kind = type[0] == 'c' ? "char" : "block";
        std::string device;
        if (wildcard(rule.major))
            device = kind + "-*";
        else if (wildcard(rule.minor))
            device = kind + "-" + std::to_string(*rule.major); // systemd 240 and later
        else
            device = "/dev/" + kind + "/" + std::to_string(*rule.major) + ":" + std::to_string(*rule.minor);
        out.emplace_back(device, rule.access);
    }
    return out;
}

bool resets_all(const spec::DeviceRule& rule)
{
    return rule.type == "a" && wildcard(rule.major) && wildcard(rule.minor) &&
           device_access_bits(rule.access) == all_device_access;
}

} // namespace

std::vector<uint8_t> cpu_list_mask(const std::string& list, const std::string& field)
{
    std::vector<uint8_t> mask;
    auto set_bit = [&](uint64_t bit) {
        if (mask.size() <= bit / 8)
            mask.resize(bit / 8 + 1, 0);
        mask[bit / 8] |= static_cast<uint8_t>(1u << (bit % 8));
    };
    const auto bad = [&] { return invalid(field, "\"" + list + "\" is not a list of numbers and ranges (0-3,8)"); };
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        std::string item = trimmed(list.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (!item.empty()) {
            size_t dash = item.find('-');
            auto first = parse_whole<uint64_t>(item.substr(0, dash));
            auto last = dash == std::string::npos ? first : parse_whole<uint64_t>(item.substr(dash + 1));
            // The kernel's own bound (NR_CPUS / MAX_NUMNODES are far below this).
            if (!first || !last || *first > *last || *last >= 65536)
                throw bad();
            for (uint64_t bit = *first; bit <= *last; ++bit)
                set_bit(bit);
        }
        if (comma == std::string::npos)
            break;
        start = comma + 1;
    }
    if (mask.empty())
        throw bad();
    return mask;
}

uint64_t quota_per_second(int64_t quota, uint64_t period)
{
    if (quota <= 0)
        return infinity;
    unsigned __int128 per_second =
        static_cast<unsigned __int128>(quota) * usec_per_sec / (period != 0 ? period : default_cpu_period);
    per_second = (per_second + quota_step - 1) / quota_step * quota_step;
    return per_second >= infinity ? infinity : static_cast<uint64_t>(per_second);
}

Translation translate_resources(const spec::Resources& resources)
{
    Translation out;
    out.files = resources;
    spec::Resources& files = out.files;
    if (files.memory)
        take_memory(out.properties, *files.memory);
    if (files.cpu)
        take_cpu(out.properties, *files.cpu);
    if (files.pids_limit.value_or(0) != 0)
        out.properties.push_back({"TasksMax", limit_or_infinity(*files.pids_limit)});
    files.pids_limit.reset();
    if (files.block_io && files.block_io->weight.value_or(0) != 0) {
        out.properties.push_back({"IOWeight", blkio_to_io_weight(*files.block_io->weight)});
        files.block_io->weight.reset();
    }
    for (auto entry = files.unified.begin(); entry != files.unified.end();)
        entry = take_unified(out.properties, entry->first, entry->second) ? files.unified.erase(entry) : ++entry;
    // The values left for the files are checked now too, before anything changes.
    for (Kind kind : all_kinds)
        v2_writes(files, kind);
    return out;
}

std::vector<UnitProperty> scope_properties(const std::string& slice, const std::string& description)
{
    return {
        {"Description", description},
        {"Slice", slice},
        {"Delegate", true},
        {"DefaultDependencies", false},
        {"CPUAccounting", true},
        {"MemoryAccounting", true},
        {"IOAccounting", true},
        {"TasksAccounting", true},
    };
}

std::vector<UnitProperty> device_properties(const std::vector<spec::DeviceRule>& rules)
{
    // Rules before the last deny-all decide nothing; without one, nothing is allowed to start with.
    size_t first = 0;
    for (size_t i = 0; i < rules.size(); ++i)
        if (!rules[i].allow && resets_all(rules[i]))
            first = i + 1;
    DeviceAllowList allowed;
    bool allow_all = false;
    for (size_t i = first; i < rules.size(); ++i) {
        const spec::DeviceRule& rule = rules[i];
        check_device_rule(rule);
        if (!rule.allow)
            return {}; // a deny after allows: systemd's list has no such thing
        allow_all = allow_all || resets_all(rule);
        auto entries = allow_entries(rule);
        if (!entries)
            return {};
        allowed.insert(allowed.end(), entries->begin(), entries->end());
    }
    if (allow_all)
        return {{"DeviceAllow", DeviceAllowList{}}, {"DevicePolicy", std::string("auto")}};
    // The empty list first: on an existing unit it clears the entries set before.
    return {{"DeviceAllow", DeviceAllowList{}}, {"DevicePolicy", std::string("strict")}, {"DeviceAllow", allowed}};
}

} // namespace cerberus::cgroups::systemd
