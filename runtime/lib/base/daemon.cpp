// SPDX-License-Identifier: Apache-2.0
#include "base/daemon.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "base/unix_socket.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

namespace cerberus::daemon {
namespace {

sockaddr_un socket_address(const Daemon& daemon)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string path = daemon.path(".sock");
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    return addr;
}

// The environment variable naming the fd a starting daemon reports readiness on.
constexpr const char* ready_fd_variable = "CERBERUS_DAEMON_READY_FD";
constexpr int ready_fd_number = 3;
// A daemon's word that its answer is still being worked out (never an answer).
constexpr std::string_view still_working_word = "\x01still working";
// How long ensure_running waits for the daemon it started to listen: a bound
// for a daemon that hangs in its start, not a wait that happens otherwise.
constexpr int start_timeout_ms = 10000;

// The child of the double fork: a session of its own, no inherited fds (a
// caller's pipes would otherwise stay open for as long as the daemon runs)
// but ready_fd, as fd 3, which the daemon writes to once it listens.
[[noreturn]] void exec_daemon(const Daemon& daemon, int ready_fd)
{
    setsid();
    if (pid_t pid = fork(); pid != 0)
        _exit(pid < 0 ? 1 : 0);
    int null_fd = open("/dev/null", O_RDWR);
    int log_fd = open(daemon.path(".log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    dup2(null_fd, 0);
    dup2(null_fd, 1);
    dup2(log_fd >= 0 ? log_fd : null_fd, 2);
    dup2(ready_fd, ready_fd_number);
    fcntl(ready_fd_number, F_SETFD, 0); // kept across the exec (dup2 onto itself would not clear it)
    syscall(SYS_close_range, ready_fd_number + 1, ~0U, 0);
    setenv(ready_fd_variable, std::to_string(ready_fd_number).c_str(), 1);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    signal(SIGPIPE, SIG_DFL);
    execl("/proc/self/exe", "cerberus", daemon.command.c_str(), static_cast<char*>(nullptr));
    _exit(127);
}

UniqueFd connect_daemon(const Daemon& daemon)
{
    UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!fd)
        return fd;
    sockaddr_un addr = socket_address(daemon);
    if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0)
        return UniqueFd();
    return fd;
}

} // namespace

void ensure_running(const Daemon& daemon)
{
    files::make_dirs(daemon.dir, 0700);
    UniqueFd lock = open_lock(daemon);
    if (flock(lock.get(), LOCK_EX | LOCK_NB) < 0) {
        if (errno == EWOULDBLOCK)
            return; // a daemon holds it
        throw_errno("locking " + daemon.path(".lock"));
    }
    lock.reset(); // the daemon takes it; of two started at once, one stays
    int ends[2];
    check(pipe2(ends, O_CLOEXEC), "pipe2");
    UniqueFd ready(ends[0]), ready_write(ends[1]);
    pid_t pid = fork();
    if (pid < 0)
        throw_errno("forking " + daemon.what);
    if (pid == 0)
        exec_daemon(daemon, ready_write.get());
    ready_write.reset();
    waitpid(pid, nullptr, 0);
    // A byte once it listens; end of file when it exits first (another
    // daemon took the lock, or it failed: its log says why).
    pollfd wait{ready.get(), POLLIN, 0};
    if (poll(&wait, 1, start_timeout_ms) == 0)
        spdlog::warn("{} did not listen within {} ms of its start", daemon.what, start_timeout_ms);
}

namespace {

void report_ready() noexcept
{
    const char* fd_text = getenv(ready_fd_variable);
    if (!fd_text)
        return;
    int fd = std::atoi(fd_text);
    unsetenv(ready_fd_variable); // once: a daemon that listens again has no one waiting
    if (write(fd, "1", 1) < 0)
        spdlog::debug("reporting readiness: {}", std::strerror(errno));
    close(fd);
}

void send_request(const Daemon& daemon, int fd, const std::string& request, int timeout_s, int passed_fd)
{
    timeval timeout{.tv_sec = timeout_s, .tv_usec = 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    if (passed_fd >= 0)
        with_context("sending to " + daemon.what, [&] { unix_socket::send_with_fd(fd, request, passed_fd); });
    else
        check(send(fd, request.data(), request.size(), MSG_NOSIGNAL), "sending to " + daemon.what);
}

std::string read_answer(const std::string& what, int fd)
{
    for (;;) {
        char answer[512];
        ssize_t n = check(recv(fd, answer, sizeof(answer), 0), "waiting for " + what);
        std::string text(answer, static_cast<size_t>(n));
        if (text != still_working_word)
            return text;
    }
}

std::string exchange(const Daemon& daemon, int fd, const std::string& request, int timeout_s, int passed_fd = -1)
{
    send_request(daemon, fd, request, timeout_s, passed_fd);
    return read_answer(daemon.what, fd);
}

} // namespace

bool listening(const Daemon& daemon)
{
    if (!files::exists(daemon.path(".sock")))
        return false;
    UniqueFd lock(open(daemon.path(".lock").c_str(), O_RDWR | O_CLOEXEC));
    return lock && flock(lock.get(), LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

std::string ask(const Daemon& daemon, const std::string& request, int timeout_s)
{
    UniqueFd fd = connect_daemon(daemon);
    // None listens: start one, which returns once it listens. Another create
    // may have started one that does not listen yet, or one may be leaving
    // (socket gone, lock not yet let go): those take a moment, waited for in
    // short, growing steps.
    auto pause = std::chrono::milliseconds(1);
    for (auto waited = std::chrono::milliseconds(0); !fd && waited < std::chrono::seconds(2); waited += pause) {
        ensure_running(daemon);
        fd = connect_daemon(daemon);
        if (fd)
            break;
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
        fd = connect_daemon(daemon);
    }
    if (!fd)
        throw_errno("connecting to " + daemon.what + " at " + daemon.path(".sock"));
    return exchange(daemon, fd.get(), request, timeout_s);
}

std::optional<std::string> ask_running(const Daemon& daemon, const std::string& request, int timeout_s)
{
    UniqueFd fd = connect_daemon(daemon);
    if (!fd)
        return std::nullopt;
    return exchange(daemon, fd.get(), request, timeout_s);
}

std::optional<std::string> PendingAnswer::wait()
{
    if (!fd_)
        return std::nullopt;
    UniqueFd fd = std::move(fd_);
    return read_answer(what_, fd.get());
}

PendingAnswer send_running_with_fd(const Daemon& daemon, const std::string& request, int passed_fd, int timeout_s)
{
    UniqueFd fd = connect_daemon(daemon);
    if (!fd)
        return {};
    send_request(daemon, fd.get(), request, timeout_s, passed_fd);
    return {daemon.what, std::move(fd)};
}

std::optional<std::string> ask_running_with_fd(const Daemon& daemon, const std::string& request, int passed_fd,
                                               int timeout_s)
{
    return send_running_with_fd(daemon, request, passed_fd, timeout_s).wait();
}

UniqueFd open_lock(const Daemon& daemon)
{
    std::string lock_path = daemon.path(".lock");
    UniqueFd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!lock)
        throw_errno("opening " + lock_path);
    return lock;
}

bool take_lock(const Daemon& daemon, int lock_fd)
{
    if (flock(lock_fd, LOCK_EX | LOCK_NB) < 0)
        return false;
    std::string pid = std::to_string(getpid()) + "\n";
    if (ftruncate(lock_fd, 0) < 0 || pwrite(lock_fd, pid.data(), pid.size(), 0) < 0)
        spdlog::warn("writing the pid to {}: {}", daemon.path(".lock"), std::strerror(errno));
    return true;
}

UniqueFd listen(const Daemon& daemon, int epoll_fd, epoll_data_t data)
{
    std::string path = daemon.path(".sock");
    unlink(path.c_str()); // a dead daemon's; we hold the lock
    UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!listener)
        throw_errno("socket");
    sockaddr_un addr = socket_address(daemon);
    check(bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), "bind " + path);
    check(chmod(path.c_str(), 0600), "chmod " + path);
    check(::listen(listener.get(), 64), "listen " + path);
    epoll_event ev{.events = EPOLLIN, .data = data};
    check(epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener.get(), &ev), "epoll_ctl");
    report_ready();
    return listener;
}

void answer_request(int listen_fd, const std::function<std::string(const std::string& request)>& answer)
{
    answer_request(listen_fd,
                   [&](const std::string& request, UniqueFd, const StillWorking&) { return answer(request); });
}

namespace {

using AnswerOfPeer = std::function<std::string(const std::string& request, UniqueFd fd,
                                               const StillWorking& still_working, const ucred& peer)>;

void answer_one(int listen_fd, const AnswerOfPeer& answer)
{
    UniqueFd conn(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn)
        return;
    timeval timeout{.tv_sec = 1, .tv_usec = 0};
    setsockopt(conn.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    ucred peer{};
    socklen_t peer_len = sizeof peer;
    if (getsockopt(conn.get(), SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) < 0)
        return;
    char buf[128];
    UniqueFd passed;
    ssize_t n = unix_socket::receive_with_fd(conn.get(), buf, sizeof(buf), 0, passed);
    if (n <= 0)
        return;
    int fd = conn.get();
    std::string text = answer(std::string(buf, static_cast<size_t>(n)), std::move(passed), [fd] {
        send(fd, still_working_word.data(), still_working_word.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }, peer);
    send(conn.get(), text.data(), text.size(), MSG_NOSIGNAL);
}

} // namespace

void answer_request(int listen_fd, const FullAnswer& answer)
{
    answer_one(listen_fd, [&](const std::string& request, UniqueFd fd, const StillWorking& still_working,
                              const ucred&) { return answer(request, std::move(fd), still_working); });
}

void answer_request_of_peer(int listen_fd, const PeerAnswer& answer)
{
    answer_one(listen_fd, [&](const std::string& request, UniqueFd, const StillWorking&, const ucred& peer) {
        return answer(request, peer);
    });
}

void Life::serve()
{
    using Clock = std::chrono::steady_clock;
    auto next_tick = Clock::now() + tick;
    auto busy_at = Clock::now();
    for (;;) {
        // Rounded up: truncated, the last part of a millisecond before a tick would be
        // waited out by epoll_wait(0) in a loop.
        int wait_ms = static_cast<int>(
            std::chrono::ceil<std::chrono::milliseconds>(next_tick - Clock::now()).count());
        epoll_event events[32];
        int n = epoll_wait(epoll_fd, events, 32, std::max(wait_ms, 0));
        if (n < 0 && errno != EINTR)
            throw_errno("epoll_wait");
        for (int i = 0; i < n; ++i)
            on_event(events[i]);
        if (Clock::now() < next_tick)
            continue;
        next_tick = Clock::now() + tick;
        if (on_tick())
            busy_at = Clock::now();
        if (Clock::now() - busy_at < linger)
            continue;
        epoll_ctl(epoll_fd, EPOLL_CTL_DEL, listener.get(), nullptr);
        listener.reset();
        unlink(daemon.path(".sock").c_str());
        flock(lock_fd, LOCK_UN);
        if (!still_needed() || !take_lock(daemon, lock_fd))
            return;
        listener = listen(daemon, epoll_fd, listener_data);
    }
}

int run(const std::string& what, const std::function<bool()>& start, const std::function<void()>& serve)
{
    try {
        if (!start())
            return 0;
        serve();
    } catch (const Error& e) {
        spdlog::error("{}: {}", what, e.what());
        return 1;
    }
    spdlog::info("{} {}: nothing left to serve, exiting", what, getpid());
    return 0;
}

std::vector<nlohmann::json> registration_documents(const std::string& dir, const SkipCgroup& skip)
{
    std::vector<nlohmann::json> documents;
    for (const auto& entry : files::list_dir(dir)) {
        if (entry.name.size() < 6 || entry.name.compare(entry.name.size() - 5, 5, ".json") != 0)
            continue; // write_file_atomic's temporary files
        if (skip && skip(std::strtoull(entry.name.c_str(), nullptr, 10)))
            continue;
        try {
            documents.push_back(nlohmann::json::parse(files::read_file(dir + "/" + entry.name)));
        } catch (const std::exception& e) {
            log_skipped(dir + "/" + entry.name, e.what());
        }
    }
    return documents;
}

void forget_registered(const Daemon& daemon, const std::string& registration, uint64_t cgroup_id,
                       const std::function<void()>& remove) noexcept
{
    try {
        if (!files::exists(registration))
            return;
        if (auto answer = ask_running(daemon, "forget " + std::to_string(cgroup_id), 10); answer && *answer != "ok")
            spdlog::warn("{}, forgetting cgroup {}: {}", daemon.what, cgroup_id, *answer);
        remove();
    } catch (const Error& e) {
        spdlog::warn("unregistering cgroup {} from {}: {}", cgroup_id, daemon.what, e.what());
    }
}

void restart_if_registered(const Daemon& daemon, const std::string& dir) noexcept
{
    try {
        if (!files::list_dir(dir).empty())
            ensure_running(daemon);
    } catch (const Error& e) {
        spdlog::warn("restarting {}: {}", daemon.what, e.what());
    }
}

void log_skipped(const std::string& where, const std::string& why)
{
    spdlog::warn("{}: {}; skipped", where, why);
}

} // namespace cerberus::daemon
