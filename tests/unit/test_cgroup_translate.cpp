// SPDX-License-Identifier: Apache-2.0
// spec::Resources to cgroup v2 and v1 control files; cgroupsPath; mountinfo.
#include "base/error.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "cgroup/cgroup_path.hpp"
#include "cgroup/cgroup_translate.hpp"
#include "error_of.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace cerberus;
using cerberus::test::error_of;
using namespace cerberus::cgroups;

namespace {

// "file=value" lines joined into one string, readable in a failed CHECK.
std::string join(const std::vector<std::string>& items)
{
    std::string out;
    for (const auto& item : items)
        out += item + "\n";
    return out;
}

std::string lines(const std::vector<ControlWrite>& writes)
{
    std::vector<std::string> out;
    for (const auto& w : writes)
        out.push_back(w.file + "=" + w.value + (w.only_if_exists ? " (if present)" : ""));
    return join(out);
}

} // namespace

TEST_CASE("v2: memory")
{
    spec::Resources r;
    r.memory = spec::MemoryResources{};
    r.memory->limit = 1 << 20;
    r.memory->reservation = 1 << 19;
    r.memory->swap = 3 << 20;
    r.memory->swappiness = 10;           // no v2 file: ignored as runc does
    r.memory->disable_oom_killer = true; // likewise
    CHECK(lines(v2_writes(r, Kind::memory)) ==
          join({"memory.max=1048576", "memory.low=524288", "memory.swap.max=2097152"}));

    r.memory = spec::MemoryResources{};
    r.memory->limit = -1;
    CHECK(lines(v2_writes(r, Kind::memory)) == join({"memory.max=max", "memory.swap.max=max (if present)"}));

    r.memory->limit = 100;
    r.memory->swap = 50;
    CHECK(error_of([&] { v2_writes(r, Kind::memory); }).find("memory.swap 50 (memory+swap) is below") !=
          std::string::npos);
    r.memory->limit.reset();
    CHECK(error_of([&] { v2_writes(r, Kind::memory); }).find("needs a memory.limit") != std::string::npos);
}

TEST_CASE("v2: cpu, cpuset, pids")
{
    spec::Resources r;
    r.cpu = spec::CpuResources{};
    r.cpu->shares = 1024;
    r.cpu->quota = 50000;
    r.cpu->period = 100000;
    r.cpu->burst = 1000;
    r.cpu->idle = 0;
    r.cpu->cpus = "0-1";
    r.cpu->mems = "0";
    r.pids_limit = 32;
    CHECK(lines(v2_writes(r, Kind::cpu)) ==
          join({"cpu.weight=100", "cpu.max=50000 100000", "cpu.max.burst=1000", "cpu.idle=0"}));
    CHECK(lines(v2_writes(r, Kind::cpuset)) == join({"cpuset.cpus=0-1", "cpuset.mems=0"}));
    CHECK(lines(v2_writes(r, Kind::pids)) == join({"pids.max=32"}));

    r.cpu = spec::CpuResources{};
    r.cpu->quota = -1;
    r.pids_limit = -1;
    CHECK(lines(v2_writes(r, Kind::cpu)) == join({"cpu.max=max"}));
    CHECK(lines(v2_writes(r, Kind::pids)) == join({"pids.max=max"}));
    r.cpu->period = 20000;
    CHECK(lines(v2_writes(r, Kind::cpu)) == join({"cpu.max=max 20000"}));

    r.cpu->realtime_runtime = 1000;
    CHECK(error_of([&] { v2_writes(r, Kind::cpu); }).find("not supported on cgroup v2") != std::string::npos);
}

TEST_CASE("v2: cpu.weight and io.weight conversions")
{
    CHECK(shares_to_weight(2) == 1);
    CHECK(shares_to_weight(512) == 59);
    CHECK(shares_to_weight(1024) == 100); // the defaults meet
    CHECK(shares_to_weight(4096) == 303);
    CHECK(shares_to_weight(262144) == 10000);
    CHECK(shares_to_weight(1) == 1);           // clamped
    CHECK(shares_to_weight(1'000'000) == 10000); // clamped
    CHECK(blkio_to_io_weight(10) == 1);
    CHECK(blkio_to_io_weight(500) == 4950);
    CHECK(blkio_to_io_weight(1000) == 10000);
}

TEST_CASE("v2: io, hugetlb, unified")
{
    spec::Resources r;
    r.block_io = spec::BlockIoResources{};
    r.block_io->weight = 500;
    spec::BlockIoDevice sda{8, 0, 200, std::nullopt, 0};
    r.block_io->weight_device = {sda};
    r.block_io->throttle_read_bps = {{8, 0, {}, {}, 1048576}};
    r.block_io->throttle_write_bps = {{8, 16, {}, {}, 0}};
    r.block_io->throttle_read_iops = {{8, 0, {}, {}, 100}};
    r.block_io->throttle_write_iops = {{8, 0, {}, {}, 200}};
    CHECK(lines(v2_writes(r, Kind::io)) ==
          join({"io.weight=default 4950", "io.bfq.weight=default 500 (if present)",
                "io.bfq.weight=8:0 200 (if present)", "io.max=8:0 rbps=1048576", "io.max=8:16 wbps=max",
                "io.max=8:0 riops=100", "io.max=8:0 wiops=200"}));

    r.hugepage_limits = {{"2MB", 4194304}, {"1GB", 0}};
    CHECK(lines(v2_writes(r, Kind::hugetlb)) == join({"hugetlb.2MB.max=4194304", "hugetlb.1GB.max=0"}));

    r.unified = {{"memory.high", "1000000"}, {"cgroup.freeze", "0"}};
    CHECK(lines(v2_writes(r, Kind::unified)) == join({"cgroup.freeze=0", "memory.high=1000000"}));
    CHECK(controller_of_key("memory.high") == "memory");
    CHECK(controller_of_key("hugetlb.2MB.max") == "hugetlb");
    CHECK(controller_of_key("cgroup.freeze") == "");

    for (const char* bad : {"../memory.max", "a/b", "..", ""}) {
        r.unified = {{bad, "1"}};
        CHECK(error_of([&] { v2_writes(r, Kind::unified); }).find("is not a file name") != std::string::npos);
    }
    CHECK(v2_writes(r, Kind::devices).empty());
}

TEST_CASE("v1: memory, ordered against the current limit")
{
    spec::Resources r;
    r.memory = spec::MemoryResources{};
    r.memory->limit = 200;
    r.memory->swap = 400;
    r.memory->reservation = 100;
    r.memory->kernel_tcp = 64;
    r.memory->swappiness = 30;
    r.memory->disable_oom_killer = true;
    std::string rest = join({"memory.soft_limit_in_bytes=100", "memory.kmem.tcp.limit_in_bytes=64",
                             "memory.swappiness=30", "memory.oom_control=1"});
    // Growing past the current limit: memory+swap first.
    CHECK(lines(v1_writes(r, Kind::memory, {}, {.memory_limit = 100})) ==
          join({"memory.memsw.limit_in_bytes=400 (if present)", "memory.limit_in_bytes=200"}) + rest);
    CHECK(lines(v1_writes(r, Kind::memory, {}, {.memory_limit = 1000})) ==
          join({"memory.limit_in_bytes=200", "memory.memsw.limit_in_bytes=400 (if present)"}) + rest);

    r.memory = spec::MemoryResources{};
    r.memory->limit = -1;
    CHECK(lines(v1_writes(r, Kind::memory, {}, {.memory_limit = 1000})) ==
          join({"memory.memsw.limit_in_bytes=-1 (if present)", "memory.limit_in_bytes=-1"}));

    r.memory->swappiness = 101;
    CHECK(error_of([&] { v1_writes(r, Kind::memory, {}, {}); }).find("swappiness 101") != std::string::npos);
}

TEST_CASE("v1: cpu, cpuset, pids, blkio, hugetlb")
{
    spec::Resources r;
    r.cpu = spec::CpuResources{};
    r.cpu->shares = 512;
    r.cpu->quota = 25000;
    r.cpu->period = 50000;
    r.cpu->realtime_runtime = 950;
    r.cpu->realtime_period = 1000;
    r.cpu->cpus = "1";
    r.pids_limit = 10;
    CHECK(lines(v1_writes(r, Kind::cpu, {}, {})) ==
          join({"cpu.shares=512", "cpu.cfs_period_us=50000", "cpu.cfs_quota_us=25000", "cpu.rt_period_us=1000",
                "cpu.rt_runtime_us=950"}));
    CHECK(lines(v1_writes(r, Kind::cpuset, {}, {})) == join({"cpuset.cpus=1"}));
    CHECK(lines(v1_writes(r, Kind::pids, {}, {})) == join({"pids.max=10"}));

    r.block_io = spec::BlockIoResources{};
    r.block_io->weight = 300;
    r.block_io->leaf_weight = 200;
    r.block_io->weight_device = {{8, 0, 100, 50, 0}};
    r.block_io->throttle_read_bps = {{8, 0, {}, {}, 4096}};
    r.block_io->throttle_write_iops = {{8, 0, {}, {}, 0}};
    CHECK(lines(v1_writes(r, Kind::io, {}, {})) ==
          join({"blkio.weight=300", "blkio.leaf_weight=200", "blkio.weight_device=8:0 100",
                "blkio.leaf_weight_device=8:0 50", "blkio.throttle.read_bps_device=8:0 4096",
                "blkio.throttle.write_iops_device=8:0 0"}));

    r.hugepage_limits = {{"2MB", 8388608}};
    CHECK(lines(v1_writes(r, Kind::hugetlb, {}, {})) == join({"hugetlb.2MB.limit_in_bytes=8388608"}));
    r.unified = {{"memory.high", "1"}};
    CHECK(v1_writes(r, Kind::unified, {}, {}).empty());
    CHECK(std::string(v1_controller(Kind::io)) == "blkio");
}

TEST_CASE("v1: the cfs period and quota go in the order whose midway ratio is lower")
{
    spec::Resources r;
    r.cpu = spec::CpuResources{};
    r.cpu->period = 10000;
    r.cpu->quota = 3000;
    auto order = [&](CurrentLimits current) { return lines(v1_writes(r, Kind::cpu, {}, current)); };
    const auto period_first = join({"cpu.cfs_period_us=10000", "cpu.cfs_quota_us=3000"});
    const auto quota_first = join({"cpu.cfs_quota_us=3000", "cpu.cfs_period_us=10000"});
    // 500000/10000 midway if the period went first; 3000/1000000 if the quota did.
    CHECK(order({.cpu_quota = 500000, .cpu_period = 1000000}) == quota_first);
    CHECK(order({}) == period_first); // no quota yet: any period is within the parent's
    // Raising both: the old quota over the new, longer period is the lower ratio.
    CHECK(order({.cpu_quota = 1000, .cpu_period = 5000}) == period_first);
    r.cpu->quota = -1; // lifting the quota: lift it first
    CHECK(order({.cpu_quota = 500000, .cpu_period = 1000000}) ==
          join({"cpu.cfs_quota_us=-1", "cpu.cfs_period_us=10000"}));
}

TEST_CASE("v1: devices, in order")
{
    std::vector<spec::DeviceRule> rules = {
        {false, "a", {}, {}, "rwm"},
        {true, "c", 1, 3, "rw"},
        {true, "b", 8, {}, "r"},
        {false, "a", 5, 1, "w"}, // typed "a" with numbers: one rule per type
    };
    CHECK(lines(v1_writes({}, Kind::devices, rules, {})) ==
          join({"devices.deny=a", "devices.allow=c 1:3 rw", "devices.allow=b 8:* r", "devices.deny=c 5:1 w",
                "devices.deny=b 5:1 w"}));
    rules = {{true, "x", {}, {}, "rwm"}};
    CHECK(error_of([&] { v1_writes({}, Kind::devices, rules, {}); }).find("type \"x\"") != std::string::npos);
    rules = {{true, "c", 1, 3, "rwx"}};
    CHECK(error_of([&] { v1_writes({}, Kind::devices, rules, {}); }).find("access \"rwx\"") != std::string::npos);
}

TEST_CASE("cgroupsPath forms")
{
    CHECK(resolve_cgroups_path("/docker/abc", "abc") == "/docker/abc");
    CHECK(resolve_cgroups_path("/libpod_parent/libpod-abc", "abc") == "/libpod_parent/libpod-abc");
    CHECK(resolve_cgroups_path("default/abc", "abc") == "/default/abc");
    CHECK(resolve_cgroups_path("//a/./b/", "x") == "/a/b");
    CHECK(resolve_cgroups_path("", "abc") == "/abc");

    std::string systemd_form = error_of([] { resolve_cgroups_path("system.slice:docker:abc", "abc"); });
    CHECK(systemd_form.find("needs --systemd-cgroup") != std::string::npos);
    CHECK(error_of([] { resolve_cgroups_path("/a/../b", "x"); }).find("\"..\"") != std::string::npos);
    CHECK(error_of([] { resolve_cgroups_path("..", "x"); }).find("\"..\"") != std::string::npos);
    CHECK(error_of([] { resolve_cgroups_path("/", "x"); }).find("root cgroup") != std::string::npos);
}

TEST_CASE("exec --cgroup values: one path for every hierarchy, or per controller, never above")
{
    CHECK(parse_sub_cgroups({}).empty());
    CHECK(parse_sub_cgroups({"a/b"}) == SubCgroups{{"", "a/b"}});
    CHECK(parse_sub_cgroups({"memory:m", "cpu,cpuacct:c"}) == SubCgroups{{"memory", "m"}, {"cpu", "c"}, {"cpuacct", "c"}});
    CHECK(error_of([] { parse_sub_cgroups({"a:b:c"}); }) == "invalid --cgroup argument: a:b:c");
    CHECK(error_of([] { parse_sub_cgroups({"memory:m", "alone"}); }).find("missing <controller>: prefix") !=
          std::string::npos);

    CHECK(clean_sub_cgroup("/") == "");
    CHECK(clean_sub_cgroup(".") == "");
    CHECK(clean_sub_cgroup("a//./b/") == "/a/b");
    CHECK(error_of([] { clean_sub_cgroup(".."); }) == "--cgroup: .. is not a sub cgroup path");
    CHECK(error_of([] { clean_sub_cgroup("a/../../b"); }).find("not a sub cgroup path") != std::string::npos);
}

TEST_CASE("mountinfo: hybrid and unified hosts")
{
    const char* hybrid = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
                         "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
                         "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
                         "40 31 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
                         "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    Mounts mounts = Mounts::parse(hybrid);
    CHECK(mounts.layout == Layout::hybrid);
    CHECK(mounts.unified == "/sys/fs/cgroup/unified");
    CHECK(mounts.v1_mount("cpu") == "/sys/fs/cgroup/cpu,cpuacct");
    CHECK(mounts.v1_mount("cpuacct") == "/sys/fs/cgroup/cpu,cpuacct");
    CHECK(mounts.v1_mount("memory") == "/sys/fs/cgroup/memory");
    CHECK(!mounts.v1_mount("systemd"));
    CHECK(mounts.v1_mount("name=systemd") == "/sys/fs/cgroup/systemd"); // runc joins it too
    CHECK(!mounts.v1_mount("pids"));

    // A named hierarchy beside cgroup2 holds no controller: still unified.
    mounts = Mounts::parse("29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
                           "40 29 0:37 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n");
    CHECK(mounts.layout == Layout::unified);

    mounts = Mounts::parse("29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
                           "30 23 0:27 / /a\\040b rw - cgroup2 cgroup2 rw\n");
    CHECK(mounts.layout == Layout::unified);
    CHECK(mounts.unified == "/sys/fs/cgroup");
    CHECK(mounts.v1.empty());
    CHECK(Mounts::parse("30 23 0:27 / /a\\040b rw - cgroup2 cgroup2 rw\n").unified == "/a b");

    CHECK(error_of([] { Mounts::parse("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"); })
              .find("no cgroup2") != std::string::npos);
    CHECK(detect_layout() == Mounts::detect().layout);
}
