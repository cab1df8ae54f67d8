// SPDX-License-Identifier: Apache-2.0
// Usage counters for `events --stats`, read from the cgroup's files. A file the
// kernel does not offer leaves its counters at 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cerberus::cgroups {

struct CpuStats {
    uint64_t total_ns = 0, user_ns = 0, kernel_ns = 0;
    std::vector<uint64_t> percpu_ns; // v1 only
    uint64_t periods = 0, throttled_periods = 0, throttled_ns = 0;
};

struct MemoryStats {
    uint64_t usage = 0, max_usage = 0, limit = 0, failcnt = 0; // "max" limit: UINT64_MAX
    uint64_t swap_usage = 0, swap_limit = 0;                   // v1: memory+swap, as runc
    std::map<std::string, uint64_t> raw;                       // memory.stat
};

struct PidsStats {
    uint64_t current = 0, limit = 0; // limit 0: none
};

struct Stats {
    CpuStats cpu;
    MemoryStats memory;
    PidsStats pids;
};

CpuStats read_cpu_v2(const std::string& dir);
CpuStats read_cpu_v1(const std::string& cpu_dir, const std::string& cpuacct_dir);
MemoryStats read_memory_v2(const std::string& dir);
MemoryStats read_memory_v1(const std::string& dir);
PidsStats read_pids(const std::string& dir); // the same files on v1 and v2

} // namespace cerberus::cgroups
