// SPDX-License-Identifier: Apache-2.0
// Cgroups on this host's kernel: a real pids limit, freezing, killing, the
// device filter program, and removal. Each test cleans up what it made.
#include "base/error.hpp"
#include "cgroup/cgroup.hpp"
#include "cgroup/cgroup_files.hpp"
#include "cgroup/device_filter.hpp"

#include <doctest/doctest.h>

#include <bpf/bpf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <utility>

using namespace cerberus;
using namespace cerberus::cgroups;

namespace {

// The host's cgroup2 plus only the named v1 hierarchies (the rest of the
// host's v1 hierarchies are left alone).
Mounts host_mounts(std::initializer_list<const char*> v1_controllers)
{
    Mounts all = Mounts::detect();
    Mounts mounts = all;
    mounts.v1.clear();
    for (const char* controller : v1_controllers)
        if (auto root = all.v1_mount(controller))
            mounts.v1[controller] = *root;
    return mounts;
}

std::string test_cgroup_name(const char* what)
{
    return "/cerberus-test-" + std::to_string(::getpid()) + "-" + what;
}

// Removes the cgroup and everything in it whatever happens in the test.
struct CleanUp {
    Cgroup& cgroup;
    ~CleanUp()
    {
        try {
            cgroup.destroy(true);
        } catch (const Error& e) {
            MESSAGE("cleaning up: " << e.what());
        }
    }
};

struct Child {
    pid_t pid = -1;
    Child() = default;
    Child(const Child&) = delete;
    ~Child()
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    int wait()
    {
        int status = 0;
        ::waitpid(std::exchange(pid, -1), &status, 0);
        return status;
    }
};

// Forks a child that runs body (its exit code) once it is in the cgroup;
// returns when the child has started body.
void spawn_in(const Cgroup& cgroup, Child& child, const std::function<int()>& body)
{
    int go[2], started[2];
    REQUIRE(::pipe2(go, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(started, O_CLOEXEC) == 0);
    child.pid = ::fork();
    REQUIRE(child.pid >= 0);
    if (child.pid == 0) {
        // The test runner's crash handlers are not for this process.
        for (int signal : {SIGTERM, SIGINT, SIGABRT, SIGSEGV, SIGBUS})
            ::signal(signal, SIG_DFL);
        ::close(go[1]);
        ::close(started[0]);
        char byte;
        if (::read(go[0], &byte, 1) != 1 || ::write(started[1], "s", 1) != 1)
            _exit(100);
        ::close(started[1]);
        _exit(body());
    }
    ::close(go[0]);
    ::close(started[1]);
    cgroup.add_process(child.pid);
    REQUIRE(::write(go[1], "g", 1) == 1);
    ::close(go[1]);
    char byte;
    REQUIRE(::read(started[0], &byte, 1) == 1);
    ::close(started[0]);
}

int open_errno(const char* path, int flags)
{
    int fd = ::open(path, flags | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ::close(fd);
    return 0;
}

bool exited_with(int status, int code)
{
    return WIFEXITED(status) && WEXITSTATUS(status) == code;
}

bool killed_by(int status, int signal)
{
    return WIFSIGNALED(status) && WTERMSIG(status) == signal;
}

bool is_root()
{
    if (::geteuid() == 0)
        return true;
    MESSAGE("skipped: needs root");
    return false;
}

} // namespace

TEST_CASE("host: a pids limit holds; freeze, kill, id, destroy")
{
    if (!is_root())
        return;
    spec::Resources resources;
    resources.pids_limit = 4;
    Cgroup cgroup = Cgroup::create({test_cgroup_name("pids"), "", &resources, {}},
                                   host_mounts({"pids", "freezer"}));
    cgroup.release();
    CleanUp clean_up{cgroup};

    struct Report {
        int forked, error;
    };
    int report_pipe[2], finish_pipe[2];
    REQUIRE(::pipe(report_pipe) == 0);
    REQUIRE(::pipe(finish_pipe) == 0);
    Child child;
    spawn_in(cgroup, child, [&] {
        ::close(report_pipe[0]);
        ::close(finish_pipe[1]);
        int hold[2];
        if (::pipe(hold) != 0)
            return 101;
        Report report{0, 0};
        for (int i = 0; i < 10; ++i) {
            pid_t pid = ::fork();
            if (pid == 0) {
                ::close(hold[1]);
                char byte;
                _exit(::read(hold[0], &byte, 1) < 0);
            }
            if (pid < 0) {
                report.error = errno;
                break;
            }
            ++report.forked;
        }
        char byte;
        if (::write(report_pipe[1], &report, sizeof report) != sizeof report || ::read(finish_pipe[0], &byte, 1) < 0)
            return 102;
        ::close(hold[1]);
        while (::wait(nullptr) > 0) {
        }
        return 0;
    });
    ::close(report_pipe[1]);
    ::close(finish_pipe[0]);
    Report report{};
    REQUIRE(::read(report_pipe[0], &report, sizeof report) == sizeof report);
    ::close(report_pipe[0]);
    CHECK(report.forked == 3); // with the child itself, 4 tasks
    CHECK(report.error == EAGAIN);
    CHECK(cgroup.pids().size() == 4);
    Stats stats = cgroup.stats();
    CHECK(stats.pids.current == 4);
    CHECK(stats.pids.limit == 4);

    cgroup.freeze();
    CHECK(cgroup.frozen());
    cgroup.thaw();
    CHECK(!cgroup.frozen());

    ::close(finish_pipe[1]);
    CHECK(exited_with(child.wait(), 0));
    CHECK(cgroup.pids().empty());

    Child sleeper;
    spawn_in(cgroup, sleeper, []() -> int {
        for (;;)
            ::pause();
    });
    cgroup.kill_all(SIGTERM); // signalled one by one, frozen meanwhile
    CHECK(killed_by(sleeper.wait(), SIGTERM));
    CHECK(!cgroup.frozen());

    struct stat st;
    REQUIRE(::stat(cgroup.unified_dir().c_str(), &st) == 0);
    CHECK(cgroup.id() == st.st_ino); // kernfs ids are the inode numbers

    cgroup.destroy();
    CHECK(!std::filesystem::exists(cgroup.unified_dir()));
    if (auto pids_root = cgroup.mounts().v1_mount("pids"))
        CHECK(!std::filesystem::exists(*pids_root + cgroup.path()));
}

TEST_CASE("host: a failed write names the file and removes what create made")
{
    if (!is_root())
        return;
    spec::Resources resources;
    resources.unified = {{"cgroup.no_such_file", "1"}};
    Mounts mounts = host_mounts({"pids"});
    const std::string name = test_cgroup_name("fail");
    try {
        Cgroup::create({name, "", &resources, {}}, mounts);
        FAIL("create did not fail");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "creating cgroup " + name + ": writing \"1\" to " + mounts.unified + name +
                                           "/cgroup.no_such_file: no such file or directory");
    }
    CHECK(!std::filesystem::exists(mounts.unified + name));
    if (auto pids_root = mounts.v1_mount("pids"))
        CHECK(!std::filesystem::exists(*pids_root + name));
}

TEST_CASE("host: a child moves itself into the v1 hierarchies through the tasks files its parent opened")
{
    if (!is_root())
        return;
    Mounts mounts = host_mounts({"pids", "freezer"});
    if (mounts.v1.empty()) {
        MESSAGE("skipped: no v1 hierarchy on this host");
        return;
    }
    const std::string name = test_cgroup_name("self");
    Cgroup cgroup = Cgroup::create({name, "", nullptr, {}}, mounts);
    cgroup.release();
    CleanUp clean_up{cgroup};
    std::vector<UniqueFd> tasks = cgroup.open_v1_tasks();
    REQUIRE(tasks.size() == mounts.v1.size());
    std::vector<int> fds;
    for (const auto& fd : tasks)
        fds.push_back(fd.get());

    // The lines of /proc/self/cgroup naming the test's cgroup (only v1 ones: the child stays out of the
    // cgroup2 one), as the child counts them.
    auto in_cgroup = [&] {
        std::string text = read_control_if_exists("/proc/self/cgroup").value_or("");
        int count = 0;
        for (size_t at = 0; (at = text.find(":" + name + "\n", at)) != std::string::npos; ++at)
            ++count;
        return count;
    };
    for (bool move : {false, true}) { // the control: without the writes it stays where it was
        Child child;
        child.pid = ::fork();
        REQUIRE(child.pid >= 0);
        if (child.pid == 0) {
            try {
                if (move)
                    Cgroup::move_self_into_v1(fds);
            } catch (const Error&) {
                _exit(100);
            }
            _exit(in_cgroup());
        }
        int status = child.wait();
        CHECK(exited_with(status, move ? static_cast<int>(mounts.v1.size()) : 0));
    }
}

TEST_CASE("host: the device filter program loads, enforces, and is replaced on update")
{
    if (!is_root())
        return;
    spec::Resources resources;
    resources.devices = {{false, "a", {}, {}, "rwm"}, {true, "c", 1, 3, "rw"}};
    // No v1 devices hierarchy: the BPF program on cgroup2 does the work.
    Cgroup cgroup = Cgroup::create({test_cgroup_name("devices"), "", &resources, {}}, host_mounts({}));
    cgroup.release();
    CleanUp clean_up{cgroup};

    auto attached_programs = [&] {
        int dir = ::open(cgroup.unified_dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        uint32_t count = 0;
        int rc = bpf_prog_query(dir, BPF_CGROUP_DEVICE, 0, nullptr, nullptr, &count);
        ::close(dir);
        return rc == 0 ? static_cast<int>(count) : -1;
    };
    CHECK(attached_programs() == 1);

    // Another manager's program on the same cgroup (systemd's, for a scope): it allows everything, and stays.
    auto allow_all = device_filter_program(std::vector<spec::DeviceRule>{{true, "a", {}, {}, "rwm"}});
    UniqueFd foreign(bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "other_dev", "GPL", allow_all.data(), allow_all.size(),
                                   nullptr));
    REQUIRE(foreign);
    UniqueFd dir(::open(cgroup.unified_dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(bpf_prog_attach(foreign.get(), dir.get(), BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI) == 0);
    CHECK(attached_programs() == 2);

    Child restricted;
    spawn_in(cgroup, restricted, [] {
        return open_errno("/dev/null", O_RDWR) == 0 && open_errno("/dev/zero", O_RDONLY) == EPERM ? 0 : 1;
    });
    CHECK(exited_with(restricted.wait(), 0));

    spec::Resources update;
    update.devices = {{true, "a", {}, {}, "rwm"}};
    cgroup.apply(update);
    CHECK(attached_programs() == 2); // ours replaced, the other kept
    Child allowed;
    spawn_in(cgroup, allowed, [] { return open_errno("/dev/zero", O_RDONLY); });
    CHECK(exited_with(allowed.wait(), 0));

    // cgroup2's own freezer and cgroup.kill, no v1 hierarchy involved.
    Child sleeper;
    spawn_in(cgroup, sleeper, []() -> int {
        for (;;)
            ::pause();
    });
    cgroup.freeze();
    CHECK(cgroup.frozen());
    cgroup.thaw();
    CHECK(!cgroup.frozen());
    cgroup.kill_all(SIGKILL);
    CHECK(killed_by(sleeper.wait(), SIGKILL));
}

TEST_CASE("host: the kernel takes the translated values in every hierarchy")
{
    if (!is_root())
        return;
    spec::Resources resources;
    resources.memory = spec::MemoryResources{};
    resources.memory->limit = 64 << 20;
    resources.memory->swap = 128 << 20;
    resources.memory->reservation = 32 << 20;
    resources.cpu = spec::CpuResources{};
    resources.cpu->shares = 512;
    resources.cpu->quota = 20000;
    resources.cpu->period = 100000;
    resources.cpu->cpus = "0";
    resources.cpu->mems = "0";
    resources.pids_limit = 100;
    resources.devices = {{false, "a", {}, {}, "rwm"}};
    Mounts mounts = Mounts::detect();
    // Where hugetlb is on a hybrid host's cgroup2 it would be enabled in the
    // host's cgroup2 root, which tests leave as they found it.
    bool hugetlb = mounts.layout == Layout::unified || mounts.v1_mount("hugetlb");
    if (hugetlb)
        resources.hugepage_limits = {{"2MB", 4 << 21}};
    Cgroup cgroup =
        Cgroup::create({test_cgroup_name("all"), "", &resources, default_allowed_devices()}, mounts);
    cgroup.release();
    CleanUp clean_up{cgroup};

    auto read = [&](const char* v1_controller, const std::string& v1_file, const std::string& v2_file) {
        auto root = mounts.v1_mount(v1_controller);
        return read_control((root ? *root : mounts.unified) + cgroup.path() + "/" + (root ? v1_file : v2_file));
    };
    CHECK(read("memory", "memory.limit_in_bytes", "memory.max") == std::to_string(64 << 20));
    CHECK(read("memory", "memory.soft_limit_in_bytes", "memory.low") == std::to_string(32 << 20));
    CHECK(read("cpu", "cpu.shares", "cpu.weight") == (mounts.v1_mount("cpu") ? "512" : "20"));
    CHECK(read("cpu", "cpu.cfs_quota_us", "cpu.max") == (mounts.v1_mount("cpu") ? "20000" : "20000 100000"));
    CHECK(read("cpuset", "cpuset.cpus", "cpuset.cpus") == "0");
    CHECK(read("pids", "pids.max", "pids.max") == "100");
    if (hugetlb)
        CHECK(read("hugetlb", "hugetlb.2MB.limit_in_bytes", "hugetlb.2MB.max") == std::to_string(4 << 21));
    if (auto devices = mounts.v1_mount("devices")) {
        std::string list = read_control(*devices + cgroup.path() + "/devices.list");
        CHECK(list.find("c 1:3 rwm") != std::string::npos);
        CHECK(list.find("a *:* rwm") == std::string::npos);
    }
}
