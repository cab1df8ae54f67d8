// SPDX-License-Identifier: Apache-2.0
#include "cgroup/cgroup_translate.hpp"

#include "base/error.hpp"
#include "cgroup/device_filter.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace cerberus::cgroups {

namespace {

using Writes = std::vector<ControlWrite>;

std::string number_or_max(int64_t value)
{
    return value < 0 ? "max" : std::to_string(value);
}

std::string device_numbers(int64_t major, int64_t minor)
{
    return std::to_string(major) + ":" + std::to_string(minor);
}

Error invalid(const std::string& message)
{
    return Error("linux.resources." + message, EINVAL);
}

void memory_v2(const spec::MemoryResources& memory, Writes& out)
{
    int64_t limit = memory.limit.value_or(0);
    if (limit != 0)
        out.push_back({"memory.max", number_or_max(limit)});
    if (memory.reservation.value_or(0) != 0)
        out.push_back({"memory.low", number_or_max(*memory.reservation)});
    if (auto swap = v2_swap_limit(memory.swap.value_or(0), limit))
        // Without swap accounting the file is missing; "no limit" then holds anyway.
        out.push_back({"memory.swap.max", number_or_max(*swap), *swap < 0});
}

void cpu_v2(const spec::CpuResources& cpu, Writes& out)
{
    if (cpu.realtime_runtime.value_or(0) != 0 || cpu.realtime_period.value_or(0) != 0)
        throw invalid("cpu.realtimeRuntime and cpu.realtimePeriod are not supported on cgroup v2");
    if (cpu.shares.value_or(0) != 0)
        out.push_back({"cpu.weight", std::to_string(shares_to_weight(*cpu.shares))});
    int64_t quota = cpu.quota.value_or(0);
    uint64_t period = cpu.period.value_or(0);
    if (quota != 0 || period != 0) {
        // "max" alone keeps the current period.
        std::string value = quota > 0 ? std::to_string(quota) : "max";
        if (period != 0)
            value += " " + std::to_string(period);
        out.push_back({"cpu.max", value});
    }
    if (cpu.burst)
        out.push_back({"cpu.max.burst", std::to_string(*cpu.burst)});
    if (cpu.idle)
        out.push_back({"cpu.idle", std::to_string(*cpu.idle)});
}

void cpuset(const spec::CpuResources& cpu, Writes& out)
{
    if (!cpu.cpus.empty())
        out.push_back({"cpuset.cpus", cpu.cpus});
    if (!cpu.mems.empty())
        out.push_back({"cpuset.mems", cpu.mems});
}

void pids(std::optional<int64_t> limit, Writes& out)
{
    if (limit.value_or(0) != 0)
        out.push_back({"pids.max", number_or_max(*limit)});
}

void io_v2(const spec::BlockIoResources& io, Writes& out)
{
    // BFQ, when a disk uses it, reads its own weights, in blkio's scale: as
    // runc does, the weight goes there too, and per-device weights only there,
    // since a per-device io.weight needs io.cost enabled on that disk
    // (EOPNOTSUPP otherwise), which no host sets up for a runtime.
    if (io.weight.value_or(0) != 0) {
        out.push_back({"io.weight", "default " + std::to_string(blkio_to_io_weight(*io.weight))});
        out.push_back({"io.bfq.weight", "default " + std::to_string(*io.weight), true});
    }
    for (const auto& device : io.weight_device)
        if (device.weight)
            out.push_back({"io.bfq.weight",
                           device_numbers(device.major, device.minor) + " " + std::to_string(*device.weight), true});
    auto throttle = [&](const std::vector<spec::BlockIoDevice>& devices, const char* key) {
        for (const auto& device : devices) {
            std::string rate = device.rate == 0 ? "max" : std::to_string(device.rate);
            out.push_back({"io.max", device_numbers(device.major, device.minor) + " " + key + "=" + rate});
        }
    };
    throttle(io.throttle_read_bps, "rbps");
    throttle(io.throttle_write_bps, "wbps");
    throttle(io.throttle_read_iops, "riops");
    throttle(io.throttle_write_iops, "wiops");
}

void unified(const std::map<std::string, std::string>& keys, Writes& out)
{
    for (const auto& [key, value] : keys) {
        if (key.empty() || key == "." || key == ".." || key.find('/') != std::string::npos)
            throw invalid("unified: key \"" + key + "\" is not a file name");
        out.push_back({key, value});
    }
}

// One of two writes the kernel judges against each other, and whether the spec sets it.
using WritePair = std::pair<ControlWrite, bool>;

// The set ones of the pair, first before second: the callers choose the order
// in which every midway state is one the kernel accepts.
void push_in_order(Writes& out, const WritePair& first, const WritePair& second)
{
    for (const auto* write : {&first, &second})
        if (write->second)
            out.push_back(write->first);
}

// memory.memsw.limit_in_bytes must stay >= memory.limit_in_bytes after each write.
void memory_v1(const spec::MemoryResources& memory, uint64_t current_limit, Writes& out)
{
    int64_t limit = memory.limit.value_or(0);
    int64_t swap = memory.swap.value_or(0);
    if (limit == -1 && swap == 0)
        swap = -1;
    WritePair limit_write{{"memory.limit_in_bytes", std::to_string(limit)}, limit != 0};
    WritePair swap_write{{"memory.memsw.limit_in_bytes", std::to_string(swap), true}, swap != 0};
    if (limit != 0 && swap != 0 && (swap == -1 || current_limit < static_cast<uint64_t>(swap)))
        push_in_order(out, swap_write, limit_write);
    else
        push_in_order(out, limit_write, swap_write);
    if (memory.reservation.value_or(0) != 0)
        out.push_back({"memory.soft_limit_in_bytes", std::to_string(*memory.reservation)});
    if (memory.kernel_tcp.value_or(0) != 0)
        out.push_back({"memory.kmem.tcp.limit_in_bytes", std::to_string(*memory.kernel_tcp)});
    if (memory.swappiness) {
        if (*memory.swappiness > 100)
            throw invalid("memory.swappiness " + std::to_string(*memory.swappiness) + " is above 100");
        out.push_back({"memory.swappiness", std::to_string(*memory.swappiness)});
    }
    if (memory.disable_oom_killer.value_or(false))
        out.push_back({"memory.oom_control", "1"});
}

// Under a parent with a quota, quota/period must stay within the parent's
// after each write: of the two orders, the one whose midway ratio is lower
// (a lower period with the old quota, or the new quota with the old period).
bool period_before_quota(uint64_t period, int64_t quota, const CurrentLimits& current)
{
    if (current.cpu_quota == UINT64_MAX || quota < 0)
        return current.cpu_quota == UINT64_MAX;
    using wide = unsigned __int128;
    return wide(current.cpu_quota) * current.cpu_period <= wide(quota) * period;
}

void cpu_v1(const spec::CpuResources& cpu, const CurrentLimits& current, Writes& out)
{
    if (cpu.shares.value_or(0) != 0)
        out.push_back({"cpu.shares", std::to_string(*cpu.shares)});
    uint64_t period = cpu.period.value_or(0);
    int64_t quota = cpu.quota.value_or(0);
    WritePair period_write{{"cpu.cfs_period_us", std::to_string(period)}, period != 0};
    WritePair quota_write{{"cpu.cfs_quota_us", std::to_string(quota)}, quota != 0};
    if (period != 0 && quota != 0 && !period_before_quota(period, quota, current))
        push_in_order(out, quota_write, period_write);
    else
        push_in_order(out, period_write, quota_write);
    if (cpu.burst)
        out.push_back({"cpu.cfs_burst_us", std::to_string(*cpu.burst)});
    if (cpu.realtime_period.value_or(0) != 0)
        out.push_back({"cpu.rt_period_us", std::to_string(*cpu.realtime_period)});
    if (cpu.realtime_runtime.value_or(0) != 0)
        out.push_back({"cpu.rt_runtime_us", std::to_string(*cpu.realtime_runtime)});
    if (cpu.idle)
        out.push_back({"cpu.idle", std::to_string(*cpu.idle)});
}

void blkio_v1(const spec::BlockIoResources& io, Writes& out)
{
    if (io.weight.value_or(0) != 0)
        out.push_back({"blkio.weight", std::to_string(*io.weight)});
    if (io.leaf_weight.value_or(0) != 0)
        out.push_back({"blkio.leaf_weight", std::to_string(*io.leaf_weight)});
    for (const auto& device : io.weight_device) {
        std::string numbers = device_numbers(device.major, device.minor);
        if (device.weight)
            out.push_back({"blkio.weight_device", numbers + " " + std::to_string(*device.weight)});
        if (device.leaf_weight)
            out.push_back({"blkio.leaf_weight_device", numbers + " " + std::to_string(*device.leaf_weight)});
    }
    auto throttle = [&](const std::vector<spec::BlockIoDevice>& devices, const std::string& file) {
        for (const auto& device : devices)
            out.push_back({file, device_numbers(device.major, device.minor) + " " + std::to_string(device.rate)});
    };
    throttle(io.throttle_read_bps, "blkio.throttle.read_bps_device");
    throttle(io.throttle_write_bps, "blkio.throttle.write_bps_device");
    throttle(io.throttle_read_iops, "blkio.throttle.read_iops_device");
    throttle(io.throttle_write_iops, "blkio.throttle.write_iops_device");
}

std::string v1_device_rule(char type, const spec::DeviceRule& rule)
{
    auto number = [](const std::optional<int64_t>& n) { return n ? std::to_string(*n) : std::string("*"); };
    return std::string(1, type) + " " + number(rule.major) + ":" + number(rule.minor) + " " + rule.access;
}

// Rules in order, each narrowing or widening what the ones before allowed.
void devices_v1(std::span<const spec::DeviceRule> rules, Writes& out)
{
    for (const auto& rule : rules) {
        check_device_rule(rule);
        const char* file = rule.allow ? "devices.allow" : "devices.deny";
        if (rule.type != "a") {
            out.push_back({file, v1_device_rule(rule.type[0], rule)});
        } else if (!rule.major && !rule.minor && device_access_bits(rule.access) == all_device_access) {
            // "a" resets the cgroup to allow-all or deny-all.
            out.push_back({file, "a"});
        } else {
            out.push_back({file, v1_device_rule('c', rule)});
            out.push_back({file, v1_device_rule('b', rule)});
        }
    }
}

} // namespace

std::optional<int64_t> v2_swap_limit(int64_t swap, int64_t limit)
{
    if (limit == -1 && swap == 0)
        return -1;
    if (swap == 0)
        return std::nullopt;
    if (swap == -1)
        return -1;
    if (swap < 0)
        throw invalid("memory.swap " + std::to_string(swap) + " is negative");
    if (limit <= 0)
        throw invalid("memory.swap " + std::to_string(swap) +
                      " needs a memory.limit: cgroup v2 takes the swap limit as swap - limit");
    if (swap < limit)
        throw invalid("memory.swap " + std::to_string(swap) + " (memory+swap) is below memory.limit " +
                      std::to_string(limit));
    return swap - limit;
}

const char* v1_controller(Kind kind)
{
    switch (kind) {
    case Kind::memory: return "memory";
    case Kind::cpu: return "cpu";
    case Kind::cpuset: return "cpuset";
    case Kind::pids: return "pids";
    case Kind::io: return "blkio";
    case Kind::hugetlb: return "hugetlb";
    case Kind::devices: return "devices";
    case Kind::unified: return "";
    }
    return "";
}

uint64_t shares_to_weight(uint64_t shares)
{
    if (shares <= 2)
        return 1;
    if (shares >= 262144)
        return 10000;
    // A quadratic in log2(shares) through (2, 1), (1024, 100) and (262144, 10000).
    double l = std::log2(static_cast<double>(shares));
    return static_cast<uint64_t>(std::ceil(std::pow(10.0, (l * l + 125 * l) / 612.0 - 7.0 / 34.0)));
}

uint64_t blkio_to_io_weight(uint64_t weight)
{
    weight = std::clamp<uint64_t>(weight, 10, 1000);
    return 1 + ((weight - 10) * 9999) / 990;
}

std::string controller_of_key(const std::string& key)
{
    std::string prefix = key.substr(0, key.find('.'));
    return prefix == "cgroup" ? "" : prefix;
}

std::vector<ControlWrite> v2_writes(const spec::Resources& resources, Kind kind)
{
    Writes out;
    switch (kind) {
    case Kind::memory:
        if (resources.memory)
            memory_v2(*resources.memory, out);
        break;
    case Kind::cpu:
        if (resources.cpu)
            cpu_v2(*resources.cpu, out);
        break;
    case Kind::cpuset:
        if (resources.cpu)
            cpuset(*resources.cpu, out);
        break;
    case Kind::pids:
        pids(resources.pids_limit, out);
        break;
    case Kind::io:
        if (resources.block_io)
            io_v2(*resources.block_io, out);
        break;
    case Kind::hugetlb:
        for (const auto& page : resources.hugepage_limits)
            out.push_back({"hugetlb." + page.page_size + ".max", std::to_string(page.limit)});
        break;
    case Kind::devices:
        break;
    case Kind::unified:
        unified(resources.unified, out);
        break;
    }
    return out;
}

std::vector<ControlWrite> v1_writes(const spec::Resources& resources, Kind kind,
                                    std::span<const spec::DeviceRule> device_rules, const CurrentLimits& current)
{
    Writes out;
    switch (kind) {
    case Kind::memory:
        if (resources.memory)
            memory_v1(*resources.memory, current.memory_limit, out);
        break;
    case Kind::cpu:
        if (resources.cpu)
            cpu_v1(*resources.cpu, current, out);
        break;
    case Kind::io:
        if (resources.block_io)
            blkio_v1(*resources.block_io, out);
        break;
    case Kind::hugetlb:
        for (const auto& page : resources.hugepage_limits)
            out.push_back({"hugetlb." + page.page_size + ".limit_in_bytes", std::to_string(page.limit)});
        break;
    case Kind::devices:
        devices_v1(device_rules, out);
        break;
    case Kind::cpuset:
    case Kind::pids:
        return v2_writes(resources, kind); // the same files on v1
    case Kind::unified:
        break; // cgroup2 files, never in a v1 hierarchy
    }
    return out;
}

} // namespace cerberus::cgroups
