// SPDX-License-Identifier: Apache-2.0
#include "cgroup/cgroup_stats.hpp"

#include "cgroup/cgroup_files.hpp"

#include <sstream>

namespace cerberus::cgroups {

namespace {

uint64_t read_number(const std::string& path)
{
    auto text = read_control_if_exists(path);
    return text ? parse_control_u64(*text, path) : 0;
}

// "key value" lines: cpu.stat, memory.stat, memory.events.
std::map<std::string, uint64_t> read_keyed(const std::string& path)
{
    std::map<std::string, uint64_t> values;
    auto text = read_control_if_exists(path);
    if (!text)
        return values;
    std::istringstream lines(*text);
    std::string key, value;
    while (lines >> key >> value)
        values[key] = parse_control_u64(value, path);
    return values;
}

uint64_t saturating_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

} // namespace

CpuStats read_cpu_v2(const std::string& dir)
{
    auto stat = read_keyed(dir + "/cpu.stat");
    CpuStats cpu;
    cpu.total_ns = stat["usage_usec"] * 1000;
    cpu.user_ns = stat["user_usec"] * 1000;
    cpu.kernel_ns = stat["system_usec"] * 1000;
    cpu.periods = stat["nr_periods"];
    cpu.throttled_periods = stat["nr_throttled"];
    cpu.throttled_ns = stat["throttled_usec"] * 1000;
    return cpu;
}

CpuStats read_cpu_v1(const std::string& cpu_dir, const std::string& cpuacct_dir)
{
    CpuStats cpu;
    cpu.total_ns = read_number(cpuacct_dir + "/cpuacct.usage");
    cpu.user_ns = read_number(cpuacct_dir + "/cpuacct.usage_user");
    cpu.kernel_ns = read_number(cpuacct_dir + "/cpuacct.usage_sys");
    const std::string percpu_path = cpuacct_dir + "/cpuacct.usage_percpu";
    std::istringstream percpu(read_control_if_exists(percpu_path).value_or(""));
    for (std::string value; percpu >> value;)
        cpu.percpu_ns.push_back(parse_control_u64(value, percpu_path));
    auto stat = read_keyed(cpu_dir + "/cpu.stat");
    cpu.periods = stat["nr_periods"];
    cpu.throttled_periods = stat["nr_throttled"];
    cpu.throttled_ns = stat["throttled_time"];
    return cpu;
}

MemoryStats read_memory_v2(const std::string& dir)
{
    MemoryStats memory;
    memory.usage = read_number(dir + "/memory.current");
    memory.max_usage = read_number(dir + "/memory.peak");
    memory.limit = read_number(dir + "/memory.max");
    memory.failcnt = read_keyed(dir + "/memory.events")["max"];
    // Reported as memory+swap, like v1 and runc.
    memory.swap_usage = saturating_add(read_number(dir + "/memory.swap.current"), memory.usage);
    memory.swap_limit = saturating_add(read_number(dir + "/memory.swap.max"), memory.limit);
    memory.raw = read_keyed(dir + "/memory.stat");
    return memory;
}

MemoryStats read_memory_v1(const std::string& dir)
{
    MemoryStats memory;
    memory.usage = read_number(dir + "/memory.usage_in_bytes");
    memory.max_usage = read_number(dir + "/memory.max_usage_in_bytes");
    memory.limit = read_number(dir + "/memory.limit_in_bytes");
    memory.failcnt = read_number(dir + "/memory.failcnt");
    memory.swap_usage = read_number(dir + "/memory.memsw.usage_in_bytes");
    memory.swap_limit = read_number(dir + "/memory.memsw.limit_in_bytes");
    memory.raw = read_keyed(dir + "/memory.stat");
    return memory;
}

PidsStats read_pids(const std::string& dir)
{
    PidsStats pids;
    pids.current = read_number(dir + "/pids.current");
    pids.limit = read_number(dir + "/pids.max");
    if (pids.limit == UINT64_MAX)
        pids.limit = 0;
    return pids;
}

} // namespace cerberus::cgroups
