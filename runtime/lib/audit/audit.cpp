// SPDX-License-Identifier: Apache-2.0
#include "audit/audit.hpp"

#include "audit/audit_format.hpp"
#include "audit/audit_registry.hpp"
#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "kernel/pinned_maps.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

namespace cerberus::audit {
namespace {

std::string run_path(const std::string& name)
{
    return std::string(run_dir) + "/" + name;
}

// The child of the double fork: a session of its own, no inherited fds (a
// caller's pipes would otherwise stay open for as long as the collector runs).
[[noreturn]] void exec_collector()
{
    setsid();
    if (pid_t pid = fork(); pid != 0)
        _exit(pid < 0 ? 1 : 0);
    int null_fd = open("/dev/null", O_RDWR);
    int log_fd = open(run_path("collector.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(log_fd >= 0 ? log_fd : null_fd, 2);
    syscall(SYS_close_range, 3, ~0U, 0);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    signal(SIGPIPE, SIG_DFL);
    execl("/proc/self/exe", "cerberus", "audit-collector", static_cast<char*>(nullptr));
    _exit(127);
}

UniqueFd connect_collector()
{
    UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd)
        return fd;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string path = run_path("collector.sock");
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0)
        return UniqueFd();
    return fd;
}

// One request, one answer; the collector answers "ok" or an error message.
std::string ask_collector(const std::string& request)
{
    UniqueFd fd = connect_collector();
    for (int tries = 0; !fd && tries < 40; ++tries) { // a collector starting (or leaving) needs a moment
        if (tries % 10 == 0)
            ensure_collector();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        fd = connect_collector();
    }
    if (!fd)
        throw_errno("connecting to the audit collector at " + run_path("collector.sock"));
    timeval timeout{.tv_sec = 10, .tv_usec = 0};
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    check(send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL), "sending to the audit collector");
    char answer[512];
    ssize_t n = check(recv(fd.get(), answer, sizeof(answer), 0), "waiting for the audit collector");
    return std::string(answer, static_cast<size_t>(n));
}

// The container's entry in the pinned policies map (its event counters).
std::optional<cerb_policy> policy_entry(uint64_t cgroup_id)
{
    auto map = kernel::open_map_if_pinned(kernel::policies_map);
    cerb_policy policy{};
    if (!map || bpf_map_lookup_elem(map->get(), &cgroup_id, &policy) < 0)
        return std::nullopt;
    return policy;
}

} // namespace

std::string trail_path(const std::string& audit_dir, const std::string& id)
{
    return audit_dir + "/" + id + ".jsonl";
}

void ensure_collector()
{
    files::make_dirs(run_dir, 0700);
    std::string lock_path = run_path("collector.lock");
    UniqueFd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!lock)
        throw_errno("opening " + lock_path);
    if (flock(lock.get(), LOCK_EX | LOCK_NB) < 0) {
        if (errno == EWOULDBLOCK)
            return; // a collector holds it
        throw_errno("locking " + lock_path);
    }
    lock.reset(); // the collector takes it; of two started at once, one stays
    pid_t pid = fork();
    if (pid < 0)
        throw_errno("forking the audit collector");
    if (pid == 0)
        exec_collector();
    waitpid(pid, nullptr, 0);
}

void register_container(const RuntimeOptions& rt, const std::string& id, uint64_t cgroup_id,
                        const TrailStart& start)
{
    std::string trail = trail_path(rt.audit_dir, id);
    with_context("starting the audit trail " + trail, [&] {
        files::make_dirs(rt.audit_dir, 0700);
        UniqueFd fd(open(trail.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
        if (!fd)
            throw_errno("open");
        timespec now{};
        clock_gettime(CLOCK_REALTIME, &now);
        std::string line =
            dump_line(start_json(id, int64_t{now.tv_sec} * 1000000000 + now.tv_nsec, start)) + "\n";
        if (write(fd.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
            throw_errno("write");
    });
    with_context("registering container " + id + " with the audit collector", [&] {
        write_registry_entry({.cgroup_id = cgroup_id, .id = id, .trail = trail, .root = rt.root,
                              .enforcement = start.enforcement, .policy = start.policy});
    });
    try {
        // Answered once it reads the ring buffer and the kernel audit log:
        // Landlock names a domain's maker only with its first denial.
        if (std::string answer = ask_collector("ping"); answer != "ok")
            throw Error("the audit collector answered: " + answer, EIO);
    } catch (const Error& e) {
        spdlog::warn("starting the audit collector: {}; events wait in the ring buffer", e.what());
    }
}

void finish_container(uint64_t cgroup_id, const std::string& pin_dir)
{
    if (pin_dir != CERB_PIN_DIR) {
        spdlog::info("cgroup {} used {}, another build's pins: that build's collector, while it runs, writes its "
                     "last events",
                     cgroup_id, pin_dir);
        return;
    }
    std::string registry_entry = registry_entry_path(cgroup_id);
    if (!files::exists(registry_entry))
        return; // never registered, or already finished
    // Nothing ever reached the ring buffer: no trail to write, no collector to
    // wait for. Landlock's denials take the kernel audit log instead: no count says.
    bool audit_log = false;
    try {
        audit_log = nlohmann::json::parse(files::read_file(registry_entry)).value("enforcement", "") == "landlock";
    } catch (const std::exception&) {
    }
    if (auto policy = policy_entry(cgroup_id);
        !audit_log && policy && policy->events_sent == 0 && policy->events_lost == 0) {
        if (unlink(registry_entry.c_str()) == 0 || errno == ENOENT)
            return;
    }
    try {
        std::string answer = ask_collector("finish " + std::to_string(cgroup_id));
        if (answer != "ok")
            throw Error("the audit collector answered: " + answer, EIO);
    } catch (const Error& e) {
        spdlog::warn("writing the last audit events of cgroup {}: {}", cgroup_id, e.what());
    }
}

std::optional<uint64_t> events_lost(uint64_t cgroup_id)
{
    if (auto policy = policy_entry(cgroup_id))
        return policy->events_lost;
    return std::nullopt;
}

} // namespace cerberus::audit
