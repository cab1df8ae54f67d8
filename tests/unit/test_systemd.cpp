// SPDX-License-Identifier: Apache-2.0
// The systemd cgroup driver's pure parts: cgroupsPath as slice:prefix:name, and
// resources as unit properties (the rest left to cgroup files).
#include "base/error.hpp"
#include "cgroup/systemd_path.hpp"
#include "cgroup/systemd_properties.hpp"
#include "cgroup/systemd_scope.hpp"
#include "error_of.hpp"

#include <doctest/doctest.h>

#include <sstream>

using namespace cerberus;
using cerberus::test::error_of;
using namespace cerberus::cgroups::systemd;

namespace {

// "Name=value" lines, readable in a failed CHECK.
std::string lines(const std::vector<UnitProperty>& properties)
{
    std::ostringstream out;
    for (const auto& p : properties) {
        out << p.name << "=";
        std::visit(
            [&](const auto& v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, bool>)
                    out << (v ? "yes" : "no");
                else if constexpr (std::is_same_v<T, uint64_t>)
                    out << (v == infinity ? std::string("infinity") : std::to_string(v));
                else if constexpr (std::is_same_v<T, std::string>)
                    out << v;
                else if constexpr (std::is_same_v<T, std::vector<uint8_t>>)
                    for (uint8_t byte : v)
                        out << std::hex << static_cast<int>(byte) << std::dec << " ";
                else if constexpr (std::is_same_v<T, std::vector<uint32_t>>)
                    for (uint32_t n : v)
                        out << n << " ";
                else
                    for (const auto& [device, access] : v)
                        out << device << ":" << access << " ";
            },
            p.value);
        out << "\n";
    }
    return out.str();
}

} // namespace

TEST_CASE("cgroupsPath slice:prefix:name names the scope and its cgroup")
{
    ScopePath docker = parse_scope_path("system.slice:docker:abc", "abc");
    CHECK(docker.slice == "system.slice");
    CHECK(docker.unit == "docker-abc.scope");
    CHECK(docker.cgroup == "/system.slice/docker-abc.scope");

    ScopePath kube = parse_scope_path("kubepods-besteffort-pod1.slice:cri-containerd:abc", "abc");
    CHECK(kube.unit == "cri-containerd-abc.scope");
    CHECK(kube.cgroup ==
          "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/cri-containerd-abc.scope");

    // runc's defaults: an empty slice is system.slice, an empty path is ":<runtime>:<id>".
    CHECK(parse_scope_path(":libpod:abc", "abc").cgroup == "/system.slice/libpod-abc.scope");
    CHECK(parse_scope_path("", "ctr1").cgroup == "/system.slice/cerberus-ctr1.scope");
    CHECK(parse_scope_path("machine.slice::abc", "abc").unit == "abc.scope");
    CHECK(parse_scope_path("-.slice:p:abc", "abc").cgroup == "/p-abc.scope");
}

TEST_CASE("a cgroupsPath the systemd driver cannot use is refused, naming the field")
{
    auto refused = [](const std::string& path) { return error_of([&] { parse_scope_path(path, "abc"); }); };
    CHECK(refused("/docker/abc").find("linux.cgroupsPath \"/docker/abc\": the systemd cgroup driver expects the form "
                                      "slice:prefix:name") != std::string::npos);
    CHECK(refused("a:b:c:d").find("slice:prefix:name") != std::string::npos);
    CHECK(refused("system.slice:docker:").find("the name part is empty") != std::string::npos);
    CHECK(refused("system.slice:docker:pod.slice").find("name is a slice") != std::string::npos);
    CHECK(refused("user.slice/user-1000.slice:p:abc").find("the character '/'") != std::string::npos);
    CHECK(refused("a--b.slice:p:abc").find("an empty part between dashes") != std::string::npos);
    CHECK(refused("system:p:abc").find("\"system\" is not a slice name") != std::string::npos);
    CHECK(refused("system.slice:p:a b").find("the character ' '") != std::string::npos);
    CHECK(refused("system.slice:p:" + std::string(300, 'x')).find("longer than systemd's 255") != std::string::npos);
}

TEST_CASE("expand_slice follows systemd's dashes")
{
    CHECK(expand_slice("system.slice") == "/system.slice");
    CHECK(expand_slice("a-b-c.slice") == "/a.slice/a-b.slice/a-b-c.slice");
    CHECK(expand_slice("-.slice") == "");
    CHECK_THROWS_AS(expand_slice(".slice"), Error);
    CHECK_THROWS_AS(expand_slice("-a.slice"), Error);
}

TEST_CASE("resources systemd owns become properties; the rest stays for files")
{
    spec::Resources r;
    r.memory = spec::MemoryResources{};
    r.memory->limit = 64 << 20;
    r.memory->reservation = 32 << 20;
    r.memory->swap = 96 << 20;
    r.cpu = spec::CpuResources{};
    r.cpu->shares = 1024;
    r.cpu->quota = 50000;
    r.cpu->period = 100000;
    r.cpu->cpus = "0-1,4";
    r.cpu->mems = "0";
    r.cpu->burst = 1000; // no systemd property: a file
    r.pids_limit = 64;
    r.block_io = spec::BlockIoResources{};
    r.block_io->weight = 500;
    r.block_io->throttle_read_bps = {{8, 0, {}, {}, 1000}};
    r.hugepage_limits = {{"2MB", 0}};
    r.unified = {{"memory.high", "max"}, {"misc.max", "res_a 1"}, {"pids.max", " 10 "}};

    Translation t = translate_resources(r);
    CHECK(lines(t.properties) == "MemoryMax=67108864\n"
                                 "MemoryLow=33554432\n"
                                 "MemorySwapMax=33554432\n" // memory+swap in the spec, swap alone for systemd
                                 "CPUWeight=100\n"
                                 "CPUQuotaPerSecUSec=500000\n"
                                 "CPUQuotaPeriodUSec=100000\n"
                                 "AllowedCPUs=13 \n"
                                 "AllowedMemoryNodes=1 \n"
                                 "TasksMax=64\n"
                                 "IOWeight=4950\n"
                                 "MemoryHigh=infinity\n"
                                 "TasksMax=10\n");
    CHECK(!t.files.memory->limit);
    CHECK(!t.files.memory->swap);
    CHECK(!t.files.cpu->shares);
    CHECK(t.files.cpu->cpus.empty());
    CHECK(t.files.cpu->burst == 1000);
    CHECK(!t.files.pids_limit);
    CHECK(!t.files.block_io->weight);
    CHECK(t.files.block_io->throttle_read_bps.size() == 1);
    CHECK(t.files.hugepage_limits.size() == 1);
    CHECK(t.files.unified == std::map<std::string, std::string>{{"misc.max", "res_a 1"}});
}

TEST_CASE("limits of -1 are systemd's infinity; unset resources give no property")
{
    spec::Resources r;
    r.memory = spec::MemoryResources{};
    r.memory->limit = -1;
    r.pids_limit = -1;
    r.cpu = spec::CpuResources{};
    r.cpu->quota = -1;
    CHECK(lines(translate_resources(r).properties) == "MemoryMax=infinity\n"
                                                      "MemorySwapMax=infinity\n"
                                                      "CPUQuotaPerSecUSec=infinity\n"
                                                      "TasksMax=infinity\n");
    CHECK(translate_resources(spec::Resources{}).properties.empty());
}

TEST_CASE("CPU quota per second rounds up to systemd's 10 ms, as runc does")
{
    CHECK(quota_per_second(50000, 100000) == 500000);
    CHECK(quota_per_second(12345, 100000) == 130000);
    CHECK(quota_per_second(20000, 0) == 200000); // the kernel's period
    CHECK(quota_per_second(0, 100000) == infinity);
    CHECK(quota_per_second(-1, 0) == infinity);

    spec::Resources r;
    r.unified = {{"cpu.max", "max 20000"}, {"cpu.weight", "7"}, {"cpuset.cpus", "9"}};
    CHECK(lines(translate_resources(r).properties) == "CPUQuotaPerSecUSec=infinity\n"
                                                      "CPUQuotaPeriodUSec=20000\n"
                                                      "CPUWeight=7\n"
                                                      "AllowedCPUs=0 2 \n");
}

TEST_CASE("bad values are refused before systemd is asked, naming the field")
{
    auto refused = [](auto&& edit) {
        spec::Resources r;
        edit(r);
        return error_of([&] { translate_resources(r); });
    };
    CHECK(refused([](spec::Resources& r) { r.unified = {{"memory.max", "lots"}}; })
              .find("linux.resources.unified[\"memory.max\"]: \"lots\" is neither a number nor \"max\"") !=
          std::string::npos);
    CHECK(refused([](spec::Resources& r) { r.unified = {{"cpu.weight", "0"}}; }).find("weight from 1 to 10000") !=
          std::string::npos);
    CHECK(refused([](spec::Resources& r) { r.unified = {{"cpu.max", "-5 100"}}; }).find("unified[\"cpu.max\"]") !=
          std::string::npos);
    CHECK(refused([](spec::Resources& r) {
              r.cpu = spec::CpuResources{};
              r.cpu->cpus = "3-1";
          }).find("linux.resources.cpu.cpus: \"3-1\"") != std::string::npos);
    CHECK(refused([](spec::Resources& r) {
              r.memory = spec::MemoryResources{};
              r.memory->swap = 10;
          }).find("needs a memory.limit") != std::string::npos);
    // Left for files, and still checked here.
    CHECK(refused([](spec::Resources& r) { r.unified = {{"../x", "1"}}; }).find("is not a file name") !=
          std::string::npos);
    CHECK(refused([](spec::Resources& r) {
              r.cpu = spec::CpuResources{};
              r.cpu->realtime_runtime = 10;
          }).find("not supported on cgroup v2") != std::string::npos);
}

TEST_CASE("device rules as DevicePolicy and DeviceAllow when systemd can say them exactly")
{
    using Rule = spec::DeviceRule;
    std::vector<Rule> engine = {{false, "a", {}, {}, "rwm"}, {true, "c", 1, 3, "rwm"}, {true, "c", 136, {}, "rw"},
                                {true, "a", {}, {}, "m"}};
    CHECK(lines(device_properties(engine)) == "DeviceAllow=\n"
                                              "DevicePolicy=strict\n"
                                              "DeviceAllow=/dev/char/1:3:rwm char-136:rw char-*:m block-*:m \n");
    // Nothing allowed before a deny-all matters.
    std::vector<Rule> reset = {{true, "c", 5, 1, "rwm"}, {false, "a", {}, {}, "rwm"}, {true, "b", 8, 0, "r"}};
    CHECK(lines(device_properties(reset)) ==
          "DeviceAllow=\nDevicePolicy=strict\nDeviceAllow=/dev/block/8:0:r \n");
    CHECK(lines(device_properties({{true, "a", {}, {}, "rwm"}})) == "DeviceAllow=\nDevicePolicy=auto\n");
    // Not expressible: a deny after allows, a "*:N" rule. systemd is left out; cerberus's program filters.
    CHECK(device_properties({{true, "a", {}, {}, "rwm"}, {false, "c", 1, 3, "w"}}).empty());
    CHECK(device_properties({{true, "c", {}, 3, "r"}}).empty());
    CHECK_THROWS_AS(device_properties({{true, "x", 1, 3, "r"}}), Error);
}

TEST_CASE("a scope plan: the unit's own properties, the resources', then the devices'")
{
    spec::Resources r;
    r.pids_limit = 5;
    ScopePlan plan = plan_scope("machine.slice:libpod:abc", "abc", &r, {{false, "a", {}, {}, "rwm"}});
    CHECK(plan.path.unit == "libpod-abc.scope");
    CHECK(lines(plan.properties) == "Description=cerberus container abc\n"
                                    "Slice=machine.slice\n"
                                    "Delegate=yes\n"
                                    "DefaultDependencies=no\n"
                                    "CPUAccounting=yes\n"
                                    "MemoryAccounting=yes\n"
                                    "IOAccounting=yes\n"
                                    "TasksAccounting=yes\n"
                                    "TasksMax=5\n"
                                    "DeviceAllow=\n"
                                    "DevicePolicy=strict\n"
                                    "DeviceAllow=\n");
    CHECK(!plan.files.pids_limit);
    CHECK(plan.files.devices.empty()); // the spec's rules (none here) stay for cerberus's own program
    CHECK_THROWS_AS(plan_scope("/docker/abc", "abc", &r, {}), Error);
}
