// SPDX-License-Identifier: Apache-2.0
// Host-wide helper processes of this binary (the audit collector, the DNS
// gate): started on demand by a double fork and an exec of a hidden command,
// one at a time by a lock file, asked over a unix socket (SOCK_SEQPACKET, one
// request and one answer per connection). In <dir>: <name>.lock (flocked by
// the running one, with its pid), <name>.sock and <name>.log (its stderr).
#pragma once

#include "base/fd.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cerberus::daemon {

struct Daemon {
    std::string dir;
    std::string name; // "collector", "gate"
    std::string command; // the hidden command that runs it: "audit-collector"
    std::string what; // for messages: "the audit collector"

    std::string path(const std::string& suffix) const { return dir + "/" + name + suffix; }
};

// Starts the daemon (double fork, setsid, exec of this binary, no inherited
// fds but a pipe it reports readiness on) unless the lock shows one running,
// and returns once it listens (or has exited: another daemon took the lock).
void ensure_running(const Daemon& daemon);

// Whether a daemon holds the lock and its socket is there: it listens (or
// is leaving, and then first looks at what it is still needed for).
bool listening(const Daemon& daemon);

// Sends one request and returns the answer, starting the daemon when none
// listens; throws when the daemon says nothing for timeout_s (a long answer
// keeps the client waiting with still_working words, see answer_request).
std::string ask(const Daemon& daemon, const std::string& request, int timeout_s);

// Same, but only to a daemon already listening: nullopt when none does.
std::optional<std::string> ask_running(const Daemon& daemon, const std::string& request, int timeout_s);

// A request sent whose answer is read later, so that the caller goes on
// working while the daemon does. Empty when no daemon listened.
class PendingAnswer {
public:
    PendingAnswer() = default;
    PendingAnswer(std::string what, UniqueFd fd) : what_(std::move(what)), fd_(std::move(fd)) {}
    // The answer, waited for up to the request's timeout; nullopt when
    // nothing was sent (or it was already read). Throws as ask does.
    std::optional<std::string> wait();

private:
    std::string what_;
    UniqueFd fd_;
};

// ask_running with passed_fd sent along (SCM_RIGHTS), the answer read later.
PendingAnswer send_running_with_fd(const Daemon& daemon, const std::string& request, int passed_fd, int timeout_s);

// The same, waiting for the answer.
std::optional<std::string> ask_running_with_fd(const Daemon& daemon, const std::string& request, int passed_fd,
                                               int timeout_s);

// The daemon's side. open_lock creates the lock file; take_lock flocks it
// (false when another daemon holds it) and writes our pid into it.
UniqueFd open_lock(const Daemon& daemon);
bool take_lock(const Daemon& daemon, int lock_fd);

// The listening socket (non-blocking), replacing a dead daemon's; mode 0600;
// added to epoll_fd with data. The first listen of a daemon ensure_running
// started tells it that the daemon is ready.
UniqueFd listen(const Daemon& daemon, int epoll_fd, epoll_data_t data);

// Accepts one request on the listening socket, if one is waiting, and sends
// back what answer makes of it.
void answer_request(int listen_fd, const std::function<std::string(const std::string& request)>& answer);
// The same with the fd the request brought (empty when none), for an answer
// whose work may grow with what it stands for: answer may call still_working
// (every second or so) to tell the waiting client.
using StillWorking = std::function<void()>;
using FullAnswer = std::function<std::string(const std::string& request, UniqueFd fd, const StillWorking& still_working)>;
void answer_request(int listen_fd, const FullAnswer& answer);
// The same with who asked (SO_PEERCRED, the kernel's word), for an answer that depends on it.
using PeerAnswer = std::function<std::string(const std::string& request, const ucred& peer)>;
void answer_request_of_peer(int listen_fd, const PeerAnswer& answer);

// The life both daemons share. serve() runs the event loop: epoll_wait on
// epoll_fd, on_event for each event, on_tick every tick (it returns whether
// anything is left to serve). After linger with nothing to serve it lets go
// of the socket and the lock (a client starts a new daemon unless it sees the
// lock held), then asks still_needed() once more (registrations that came
// meanwhile): when it is, it takes the lock back, listens again and goes on.
struct Life {
    const Daemon& daemon;
    int lock_fd;
    int epoll_fd;
    UniqueFd& listener;
    epoll_data_t listener_data; // the epoll data of the listening socket
    std::chrono::milliseconds tick;
    std::chrono::milliseconds linger;
    std::function<void(const epoll_event&)> on_event;
    std::function<bool()> on_tick;
    std::function<bool()> still_needed;

    // Returns once the daemon is no longer needed.
    void serve();
};

// What create registered with a daemon, one JSON file per container in dir
// (<cgroup id>.json, written atomically): every one that parses as what
// convert makes of it; a malformed file is logged and skipped. A file whose
// cgroup id skip names is not read: a daemon's tick reads only the
// containers it does not serve yet (a thousand policies parsed each second
// were most of an idle gate's memory and time).
using SkipCgroup = std::function<bool(uint64_t cgroup_id)>;
template <typename T>
std::vector<T> read_registrations(const std::string& dir, T (*convert)(const nlohmann::json&),
                                  const SkipCgroup& skip = {});
std::vector<nlohmann::json> registration_documents(const std::string& dir, const SkipCgroup& skip = {});
void log_skipped(const std::string& dir, const std::string& why);

// delete (and a failed create): a daemon that runs is asked to "forget
// <cgroup id>", then remove() takes the registration away; nothing to do
// without a registration file. Never throws: what fails is logged.
void forget_registered(const Daemon& daemon, const std::string& registration, uint64_t cgroup_id,
                       const std::function<void()>& remove) noexcept;

// state, list, create: a daemon for the registrations in dir left by one that died.
void restart_if_registered(const Daemon& daemon, const std::string& dir) noexcept;

// The daemon's process: start() (false when another daemon holds the lock),
// then serve(); returns its exit status, logging an error as what.
int run(const std::string& what, const std::function<bool()>& start, const std::function<void()>& serve);

template <typename T>
std::vector<T> read_registrations(const std::string& dir, T (*convert)(const nlohmann::json&), const SkipCgroup& skip)
{
    std::vector<T> out;
    for (const auto& document : registration_documents(dir, skip)) {
        try {
            out.push_back(convert(document));
        } catch (const std::exception& e) {
            log_skipped(dir, e.what());
        }
    }
    return out;
}

} // namespace cerberus::daemon
