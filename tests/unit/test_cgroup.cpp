// SPDX-License-Identifier: Apache-2.0
// Cgroup against a temporary directory standing in for the cgroup roots:
// which directories are made and which files written, on both host layouts.
#include "base/error.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_files.hpp"
#include "cgroup/device_filter.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace cerberus;
using namespace cerberus::cgroups;
namespace fs = std::filesystem;

namespace {

struct TempRoot : TempDir {
    void put(const std::string& file, const std::string& content) const
    {
        fs::create_directories(fs::path(path + "/" + file).parent_path());
        std::ofstream(path + "/" + file) << content;
    }
    std::string get(const std::string& file) const { return read_control_if_exists(path + "/" + file).value_or("<none>"); }
    bool has(const std::string& file) const { return fs::exists(path + "/" + file); }
};

Mounts pure_v2(const TempRoot& root)
{
    root.put("cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc");
    root.put("cgroup.subtree_control", "");
    Mounts mounts;
    mounts.layout = Layout::unified;
    mounts.unified = root.path;
    mounts.create_missing_files = true;
    return mounts;
}

// Like this host: v1 controllers (cpu and cpuacct mounted together), hugetlb on cgroup2.
Mounts hybrid(const TempRoot& root)
{
    Mounts mounts;
    mounts.layout = Layout::hybrid;
    mounts.unified = root.path + "/unified";
    root.put("unified/cgroup.controllers", "hugetlb");
    root.put("unified/cgroup.subtree_control", "");
    for (const char* controller : {"memory", "cpuset", "pids", "blkio", "devices", "freezer"}) {
        fs::create_directories(root.path + "/" + controller);
        mounts.v1[controller] = root.path + "/" + controller;
    }
    fs::create_directories(root.path + "/cpu,cpuacct");
    mounts.v1["cpu"] = mounts.v1["cpuacct"] = root.path + "/cpu,cpuacct";
    root.put("cpuset/cpuset.cpus", "0-1\n");
    root.put("cpuset/cpuset.mems", "0\n");
    mounts.create_missing_files = true;
    return mounts;
}

spec::Resources some_resources()
{
    spec::Resources r;
    r.memory = spec::MemoryResources{};
    r.memory->limit = 1 << 20;
    r.cpu = spec::CpuResources{};
    r.cpu->shares = 1024;
    r.cpu->quota = 50000;
    r.cpu->period = 100000;
    r.pids_limit = 64;
    r.block_io = spec::BlockIoResources{};
    r.block_io->throttle_read_bps = {{8, 0, {}, {}, 1000}};
    r.hugepage_limits = {{"2MB", 0}};
    r.unified = {{"misc.max", "res_a 1"}};
    return r;
}

} // namespace

TEST_CASE("create on a cgroup v2 host: controllers enabled, files written, kept after release")
{
    TempRoot root;
    spec::Resources resources = some_resources();
    Cgroup cgroup = Cgroup::create({"/docker/abc", "abc", &resources, {}}, pure_v2(root));
    cgroup.release();
    CHECK(cgroup.path() == "/docker/abc");
    CHECK(cgroup.unified_dir() == root.path + "/docker/abc");
    // Only the root offers controllers here; the common ones plus misc (from a unified key).
    CHECK(root.get("cgroup.subtree_control") == "+cpu +cpuset +hugetlb +io +memory +pids +misc");
    CHECK(root.get("docker/abc/memory.max") == "1048576");
    CHECK(root.get("docker/abc/cpu.weight") == "100");
    CHECK(root.get("docker/abc/cpu.max") == "50000 100000");
    CHECK(root.get("docker/abc/pids.max") == "64");
    CHECK(root.get("docker/abc/io.max") == "8:0 rbps=1000");
    CHECK(root.get("docker/abc/hugetlb.2MB.max") == "0");
    CHECK(root.get("docker/abc/misc.max") == "res_a 1");
    CHECK(!root.has("docker/abc/memory.swap.max"));

    cgroup.add_process(4242);
    CHECK(root.get("docker/abc/cgroup.procs") == "4242");
}

TEST_CASE("adopt a systemd scope: only the files systemd leaves, controllers enabled above, nothing removed")
{
    TempRoot root;
    Mounts mounts = pure_v2(root);
    root.put("system.slice/cgroup.controllers", "cpu io memory pids");
    root.put("system.slice/cgroup.subtree_control", "cpu io memory pids");
    root.put("system.slice/x.scope/cgroup.controllers", "cpu io memory pids");
    spec::Resources files = some_resources();
    files.memory.reset(); // what systemd::translate_resources leaves to files
    files.cpu.reset();
    files.pids_limit.reset();
    {
        Cgroup cgroup = Cgroup::adopt("/system.slice/x.scope", files, {}, mounts);
        CHECK(cgroup.unified_dir() == root.path + "/system.slice/x.scope");
        CHECK(root.get("system.slice/x.scope/io.max") == "8:0 rbps=1000");
        CHECK(root.get("system.slice/x.scope/hugetlb.2MB.max") == "0");
        CHECK(root.get("system.slice/x.scope/misc.max") == "res_a 1");
        CHECK(!root.has("system.slice/x.scope/memory.max"));
        // hugetlb and misc are not systemd's: enabled where the parent offers them; io is enabled already.
        CHECK(root.get("cgroup.subtree_control") == "+io +hugetlb +misc");
        CHECK(root.get("system.slice/cgroup.subtree_control") == "cpu io memory pids");
    }
    CHECK(root.has("system.slice/x.scope")); // systemd's to remove, as the unit stops

    Mounts hybrid_mounts = hybrid(root);
    CHECK_THROWS_WITH_AS(Cgroup::adopt("/system.slice/x.scope", files, {}, hybrid_mounts),
                         doctest::Contains("cgroup v2 only"), Error);
}

TEST_CASE("create on a hybrid host: each kind in its hierarchy")
{
    TempRoot root;
    spec::Resources resources = some_resources();
    resources.unified = {{"hugetlb.1GB.max", "0"}};
    resources.devices = {{false, "a", {}, {}, "rwm"}};
    std::vector<spec::DeviceRule> defaults = {{true, "c", 1, 3, "rwm"}};
    Cgroup cgroup = Cgroup::create({"", "ctr", &resources, defaults}, hybrid(root));
    cgroup.release();
    CHECK(cgroup.path() == "/ctr");
    CHECK(root.get("memory/ctr/memory.limit_in_bytes") == "1048576");
    CHECK(!root.has("memory/ctr/memory.memsw.limit_in_bytes")); // the kernel lacks it here
    CHECK(root.get("cpu,cpuacct/ctr/cpu.shares") == "1024");
    CHECK(root.get("cpu,cpuacct/ctr/cpu.cfs_period_us") == "100000");
    CHECK(root.get("cpu,cpuacct/ctr/cpu.cfs_quota_us") == "50000");
    CHECK(root.get("cpuset/ctr/cpuset.cpus") == "0-1"); // copied from the parent
    CHECK(root.get("cpuset/ctr/cpuset.mems") == "0");
    CHECK(root.get("pids/ctr/pids.max") == "64");
    CHECK(root.get("blkio/ctr/blkio.throttle.read_bps_device") == "8:0 1000");
    CHECK(root.get("devices/ctr/devices.deny") == "a");
    CHECK(root.get("devices/ctr/devices.allow") == "c 1:3 rwm");
    // hugetlb is not mounted on v1: cgroup2 files, and the controller enabled there.
    CHECK(root.get("unified/ctr/hugetlb.2MB.max") == "0");
    CHECK(root.get("unified/ctr/hugetlb.1GB.max") == "0");
    CHECK(root.get("unified/cgroup.subtree_control") == "+hugetlb");
    CHECK(fs::is_directory(root.path + "/freezer/ctr"));

    cgroup.add_process(7);
    for (const char* dir : {"memory", "cpu,cpuacct", "cpuset", "pids", "blkio", "devices", "freezer", "unified"})
        CHECK(root.get(std::string(dir) + "/ctr/cgroup.procs") == "7");
}

TEST_CASE("update on a hybrid host: memory+swap written first when the limit grows")
{
    TempRoot root;
    Mounts mounts = hybrid(root);
    root.put("memory/ctr/memory.limit_in_bytes", "100\n");
    root.put("memory/ctr/memory.memsw.limit_in_bytes", "100\n");
    Cgroup cgroup = Cgroup::open("/ctr", mounts);
    spec::Resources resources;
    resources.memory = spec::MemoryResources{};
    resources.memory->limit = 200;
    resources.memory->swap = 400;
    cgroup.apply(resources);
    CHECK(root.get("memory/ctr/memory.memsw.limit_in_bytes") == "100\n400");
    CHECK(root.get("memory/ctr/memory.limit_in_bytes") == "100\n200");
    // Device rules stay as they are when none are given.
    CHECK(!root.has("devices/ctr/devices.deny"));
}

TEST_CASE("a failed create leaves nothing behind")
{
    TempRoot root;
    Mounts mounts = hybrid(root);
    mounts.v1["pids"] = root.path + "/missing-pids"; // mkdir fails there, after the others
    try {
        Cgroup::create({"/a/b", "b", nullptr, {}}, mounts);
        FAIL("create did not fail");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "creating cgroup /a/b: mkdir " + root.path +
                                           "/missing-pids/a: no such file or directory");
        CHECK(e.errnum() == ENOENT);
    }
    CHECK(!root.has("unified/a"));
    CHECK(!root.has("memory/a"));
    CHECK(!root.has("cpuset/a"));

    // Invalid resources fail before any directory is made.
    spec::Resources bad;
    bad.unified = {{"../escape", "1"}};
    CHECK_THROWS_WITH_AS(Cgroup::create({"/c", "c", &bad, {}}, hybrid(root)),
                         "linux.resources.unified: key \"../escape\" is not a file name", Error);
    CHECK(!root.has("unified/c"));
    CHECK_THROWS_WITH_AS(Cgroup::create({"/x/../y", "y", nullptr, {}}, hybrid(root)),
                         "cgroupsPath \"/x/../y\": \"..\" components are not allowed", Error);
    CHECK_THROWS_AS(Cgroup::create({"machine.slice:libpod:abc", "abc", nullptr, {}}, hybrid(root)), Error);
}

TEST_CASE("a cgroup not released is removed when dropped")
{
    TempRoot root;
    {
        Cgroup cgroup = Cgroup::create({"/p/q", "q", nullptr, {}}, hybrid(root));
        CHECK(root.has("unified/p/q"));
        CHECK(root.has("memory/p/q"));
        Cgroup moved = std::move(cgroup); // ownership of the directories moves along
    }
    CHECK(!root.has("unified/p"));
    CHECK(!root.has("memory/p"));
}

TEST_CASE("open checks the saved path")
{
    TempRoot root;
    CHECK_THROWS_AS(Cgroup::open("/a/../../etc", pure_v2(root)), Error);
    CHECK(Cgroup::open("/a/b", pure_v2(root)).unified_dir() == root.path + "/a/b");
}

TEST_CASE("stats from v2 and v1 files")
{
    TempRoot root;
    root.put("ctr/cpu.stat", "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\nnr_periods 4\nnr_throttled 1\n"
                             "throttled_usec 20\n");
    root.put("ctr/memory.current", "4096\n");
    root.put("ctr/memory.max", "max\n");
    root.put("ctr/memory.peak", "8192\n");
    root.put("ctr/memory.events", "low 0\nhigh 0\nmax 3\noom 0\n");
    root.put("ctr/memory.stat", "anon 1024\nfile 2048\n");
    root.put("ctr/pids.current", "2\n");
    root.put("ctr/pids.max", "max\n");
    Stats v2 = Cgroup::open("/ctr", pure_v2(root)).stats();
    CHECK(v2.cpu.total_ns == 1500000);
    CHECK(v2.cpu.user_ns == 1000000);
    CHECK(v2.cpu.kernel_ns == 500000);
    CHECK(v2.cpu.throttled_periods == 1);
    CHECK(v2.cpu.throttled_ns == 20000);
    CHECK(v2.memory.usage == 4096);
    CHECK(v2.memory.max_usage == 8192);
    CHECK(v2.memory.limit == UINT64_MAX);
    CHECK(v2.memory.failcnt == 3);
    CHECK(v2.memory.swap_usage == 4096); // no swap files: memory alone
    CHECK(v2.memory.raw.at("file") == 2048);
    CHECK(v2.pids.current == 2);
    CHECK(v2.pids.limit == 0);

    root.put("cpu,cpuacct/ctr/cpuacct.usage", "300\n");
    root.put("cpu,cpuacct/ctr/cpuacct.usage_user", "200\n");
    root.put("cpu,cpuacct/ctr/cpuacct.usage_sys", "100\n");
    root.put("cpu,cpuacct/ctr/cpuacct.usage_percpu", "120 180 \n");
    root.put("cpu,cpuacct/ctr/cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
    root.put("memory/ctr/memory.usage_in_bytes", "100\n");
    root.put("memory/ctr/memory.limit_in_bytes", "9223372036854771712\n");
    root.put("memory/ctr/memory.failcnt", "0\n");
    root.put("pids/ctr/pids.current", "1\n");
    root.put("pids/ctr/pids.max", "10\n");
    Stats v1 = Cgroup::open("/ctr", hybrid(root)).stats();
    CHECK(v1.cpu.total_ns == 300);
    CHECK(v1.cpu.percpu_ns == std::vector<uint64_t>{120, 180});
    CHECK(v1.memory.usage == 100);
    CHECK(v1.memory.limit == 9223372036854771712ULL);
    CHECK(v1.pids.current == 1);
    CHECK(v1.pids.limit == 10);
}

TEST_CASE("destroy removes the cgroup in every hierarchy, sub-cgroups too")
{
    TempRoot root;
    Cgroup cgroup = Cgroup::create({"/parent/ctr", "ctr", nullptr, {}}, hybrid(root));
    cgroup.release();
    fs::create_directories(root.path + "/unified/parent/ctr/nested");
    Cgroup::open("/parent/ctr", hybrid(root)).destroy();
    CHECK(!root.has("unified/parent/ctr"));
    CHECK(!root.has("cpuset/parent/ctr"));
    CHECK(root.has("unified/parent")); // shared parents stay
    CHECK_NOTHROW(Cgroup::open("/parent/ctr", hybrid(root)).destroy()); // gone already: nothing to do
}
