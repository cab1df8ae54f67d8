// SPDX-License-Identifier: Apache-2.0
#include "broker/broker_server.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "base/served_containers.hpp"
#include "base/unix_socket.hpp"
#include "broker/broker_loop.hpp"
#include "broker/decision_hook.hpp"
#include "broker/tool_user.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "policy/policy_commands.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstring>

namespace cerberus::broker {
namespace {

// "/proc/self/fd/N/broker.sock": a socket bound or removed through the
// directory's fd, whatever the length of the directory's path.
std::string through(int dir_fd)
{
    return "/proc/self/fd/" + std::to_string(dir_fd) + "/" + socket_name;
}

UniqueFd bind_container_socket(int dir_fd)
{
    std::string path = through(dir_fd);
    unlink(path.c_str()); // a dead broker's
    UniqueFd listener(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!listener)
        throw_errno("socket");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    check(bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), "bind " + path);
    // The agent may run as any user; only its container sees the directory.
    check(chmod(path.c_str(), 0666), "chmod " + path);
    check(listen(listener.get(), 64), "listen " + path);
    return listener;
}

void send_answer(int connection, const Answer& answer)
{
    std::string text = answer_message(answer);
    if (send(connection, text.data(), text.size(), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        spdlog::debug("answering a call: {}", std::strerror(errno)); // the shim went away
}

} // namespace

bool Broker::start()
{
    files::make_dirs(run_dir, 0700);
    lock_ = daemon::open_lock(daemon_);
    if (!daemon::take_lock(daemon_, lock_.get()))
        return false;
    cgroup2_ = cgroups::Mounts::detect().unified;
    workdir_ = std::string(run_dir) + "/work";
    files::make_dirs(workdir_, 0700);
    host_mnt_.reset(open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
    if (!host_mnt_)
        throw_errno("opening the broker's mount namespace");
    watches_.open();
    add_registered(); // create waits for its socket; a restarted broker serves what it served
    recover_asks();
    listener_ = daemon::listen(daemon_, watches_.epoll_fd(), {.u64 = watches_.control_key});
    spdlog::info("command broker {} started, serving {} containers", getpid(), containers_.size());
    return true;
}

void Broker::add_registered()
{
    auto served = [&](uint64_t cgroup_id) { return containers_.count(cgroup_id) != 0; };
    daemon::add_unserved(
        read_registrations(served), served, [&](Registration registration) { add(std::move(registration)); },
        [&](uint64_t cgroup_id) { forget(cgroup_id); });
}

void Broker::add(Registration registration)
{
    uint64_t cgroup_id = registration.cgroup_id;
    Served served;
    served.socket_dir.reset(open(registration.socket_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!served.socket_dir)
        throw_errno("opening " + registration.socket_dir);
    served.listener = bind_container_socket(served.socket_dir.get());
    served.registration = std::move(registration);
    Served& kept = containers_.emplace(cgroup_id, std::move(served)).first->second;
    kept.watch = watches_.add({Kind::listener, cgroup_id, kept.listener.get()}, EPOLLIN);
}

void Broker::forget(uint64_t cgroup_id)
{
    for (auto it = calls_.begin(); it != calls_.end();) {
        auto next = std::next(it);
        if (it->second.cgroup_id == cgroup_id)
            end(it->first, {Answer::Kind::failed, 0, "the container is being deleted"}, false);
        it = next;
    }
    try {
        grants_.drop_container(cgroup_id);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
    if (auto it = containers_.find(cgroup_id); it != containers_.end()) {
        watches_.remove(it->second.watch);
        unlink(through(it->second.socket_dir.get()).c_str());
        containers_.erase(it);
    }
    try {
        remove_registration(cgroup_id);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

std::string Broker::serve(uint64_t cgroup_id)
{
    return daemon::serve_registration(registration_path(cgroup_id), cgroup_id, containers_.count(cgroup_id) != 0,
                                      [&](const nlohmann::json& j) { add(registration_from_json(j)); });
}

// "serve <cgroup id>" (create), "forget <cgroup id>" (delete), and an operator's (broker_ask.cpp).
void Broker::serve_request()
{
    daemon::answer_container_request_of_peer(
        listener_.get(), [&](uint64_t cgroup_id) { return serve(cgroup_id); },
        [&](uint64_t cgroup_id) { forget(cgroup_id); },
        [&](const std::string& request, const ucred& peer) { return answer_operator(request, peer); });
}

void Broker::accept_calls(uint64_t cgroup_id, int listener)
{
    for (;;) {
        UniqueFd connection(accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!connection) {
            if (errno != EAGAIN && errno != EINTR)
                spdlog::warn("cgroup {}: accept: {}", cgroup_id, std::strerror(errno));
            return;
        }
        uint64_t id = next_call_++;
        Call& call = calls_[id];
        call.cgroup_id = cgroup_id;
        call.deadline = Clock::now() + request_wait;
        call.connection = std::move(connection);
        call.connection_watch = watches_.add({Kind::connection, id, call.connection.get()}, EPOLLIN | EPOLLRDHUP);
    }
}

void Broker::read_request(uint64_t call_id)
{
    Call& call = calls_.at(call_id);
    std::string buf(max_request_bytes + 1, '\0');
    std::vector<UniqueFd> fds;
    int flags = 0;
    ssize_t n = unix_socket::receive_with_fds(call.connection.get(), buf.data(), buf.size(), MSG_DONTWAIT, fds, &flags);
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0)
        return end(call_id, {}, false); // gone before asking
    try {
        if (flags & (MSG_TRUNC | MSG_CTRUNC) || static_cast<size_t>(n) > max_request_bytes)
            throw Error("malformed call: longer than " + std::to_string(max_request_bytes) + " bytes", E2BIG);
        if (fds.size() != 3)
            throw Error("malformed call: " + std::to_string(fds.size()) + " fds, not stdin, stdout and stderr", EINVAL);
        buf.resize(static_cast<size_t>(n));
        decide(call_id, parse_request(buf), std::move(fds));
    } catch (const Error& e) {
        spdlog::info("cgroup {}: {}", call.cgroup_id, e.what());
        end(call_id, {Answer::Kind::failed, 0, e.what()}, false);
    }
}

void Broker::decide(uint64_t call_id, const Request& request, std::vector<UniqueFd> stdio)
{
    Call& call = calls_.at(call_id);
    const Registration& registration = containers_.at(call.cgroup_id).registration;
    auto decision = policy::decide_command(registration.commands, request.tool, request.args);
    call.record.tool = request.tool;
    call.record.args = request.args;
    call.record.cwd = request.cwd;
    call.record.rule = decision.rule;
    // Audit mode runs what its rules would deny or ask about, but only of a tool the policy lists.
    if (decision.ask && !registration.audit)
        return ask_operator(call_id, request, std::move(stdio));
    bool listed = registration.commands.count(request.tool) != 0;
    if (!decision.allowed && !(registration.audit && listed)) {
        call.record.verdict = "denied";
        return end(call_id, {Answer::Kind::denied, 0, decision.rule});
    }
    call.record.verdict = decision.allowed ? "allowed" : "audit";
    std::optional<DecisionHook> hook;
    try {
        hook = read_decision_hook(broker_config);
    } catch (const Error& e) {
        call.record.verdict = "failed";
        call.record.rule += "; " + std::string(e.what());
        return end(call_id, {Answer::Kind::failed, 0, e.what()});
    }
    if (!hook)
        return run_decided(call_id, request, stdio);
    // The host's hook has its say too, off the loop; the call waits for it with what it brought.
    call.record.backend = hook->name();
    call.hook_answer = ask_hook(*hook, hook_call(registration.id, request.tool, request.args, request.cwd,
                                                 decision.allowed, decision.rule));
    call.hook_watch = watches_.add({Kind::hook, call_id, call.hook_answer.get()}, EPOLLIN);
    call.request = request;
    call.stdio = std::move(stdio);
}

void Broker::on_hook_answer(uint64_t call_id)
{
    Call& call = calls_.at(call_id);
    HookVerdict verdict = read_hook_verdict(call.hook_answer.get());
    watches_.remove(std::exchange(call.hook_watch, 0));
    call.hook_answer.reset();
    call.record.rule += "; " + verdict.reason;
    if (!verdict.allowed) {
        // Audit mode runs what the hook denies too, recorded as what it would have refused.
        if (!containers_.at(call.cgroup_id).registration.audit) {
            call.record.verdict = "denied";
            return end(call_id, {Answer::Kind::denied, 0, verdict.reason});
        }
        call.record.verdict = "audit";
    }
    Request request = std::move(*call.request);
    call.request.reset();
    std::vector<UniqueFd> stdio = std::move(call.stdio);
    run_decided(call_id, request, stdio);
}

void Broker::run_decided(uint64_t call_id, const Request& request, const std::vector<UniqueFd>& stdio)
{
    Call& call = calls_.at(call_id);
    try {
        launch(call_id, request, stdio);
    } catch (const Error& e) {
        call.record.verdict = "failed";
        call.record.rule += "; " + std::string(e.what());
        end(call_id, {Answer::Kind::failed, 0, e.what()});
    }
}

void Broker::launch(uint64_t call_id, const Request& request, const std::vector<UniqueFd>& stdio)
{
    Call& call = calls_.at(call_id);
    Caller caller = identify_caller(call.connection.get(), cgroup2_, call.cgroup_id);
    UniqueFd cwd = resolve_cwd(caller, request.cwd);
    Launch launch;
    launch.binary = host_binary(request.tool, broker_config);
    launch.argv.push_back(request.tool);
    launch.argv.insert(launch.argv.end(), request.args.begin(), request.args.end());
    launch.env = tool_environment(request.tool, credentials_dir);
    call.relay.emplace(stdio);
    for (int i = 0; i < 3; ++i)
        launch.stdio[i] = call.relay->tool_stdio()[i];
    launch.cwd = cwd.get();
    launch.caller_mnt = caller.mntns.get();
    launch.host_mnt = host_mnt_.get();
    launch.workdir = workdir_;
    launch.hidden_dir = run_root;
    launch.workdir_path = directories_below(run_root, workdir_);
    const ToolUser& user = tool_user_for(caller.fsuid, caller.fsgid);
    launch.uid = user.uid;
    launch.gid = user.gid;
    launch.idmap = user.idmap.get();
    if (auto policy = read_tool_policy(request.tool, credentials_dir)) {
        const Registration& registration = containers_.at(call.cgroup_id).registration;
        CallTrail trail{registration.id, registration.trail, {{"tool", request.tool}, {"args", request.args}}};
        call.confinement.emplace(*policy, cgroup2_, std::to_string(getpid()) + "-" + std::to_string(call_id),
                                 cwd.get(), trail);
        launch.cgroup_procs = call.confinement->cgroup_procs();
        launch.landlock_ruleset = call.confinement->ruleset();
        launch.landlock_flags = call.confinement->ruleset_flags();
    }
    call.tool.emplace(RunningTool::start(launch));
    call.relay->tool_started();
    call.tool_watch = watches_.add({Kind::tool, call_id, call.tool->pidfd()}, EPOLLIN);
}

// The mapping namespace of a caller's ids, made once and kept: making one forks the broker (a millisecond
// and more of each call). Callers' ids are few; past 64 the kept ones are dropped.
const ToolUser& Broker::tool_user_for(uid_t caller_uid, gid_t caller_gid)
{
    auto key = std::pair{caller_uid, caller_gid};
    auto it = tool_users_.find(key);
    if (it == tool_users_.end()) {
        if (tool_users_.size() >= 64)
            tool_users_.clear(); // a tool started has its own copy of the descriptor
        it = tool_users_.emplace(key, tool_user(caller_uid, caller_gid)).first;
    }
    return it->second;
}

// While the decision hook is asked or the tool runs, the connection only ever
// says that the shim went away: then nothing of the call may go on.
void Broker::on_connection(uint64_t call_id, uint32_t events)
{
    Call& call = calls_.at(call_id);
    if (!call.tool && !call.request)
        return read_request(call_id);
    char byte;
    if (!(events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) && recv(call.connection.get(), &byte, 1, MSG_DONTWAIT) != 0)
        return;
    if (!call.tool && call.ask) { // gone while an operator was asked: nothing ran
        call.record.verdict = "denied";
        call.record.answer = "caller gone";
        call.record.rule += "; the caller went away while ask " + call.ask->id + " was pending";
        return end(call_id, {}, true);
    }
    if (!call.tool) // gone while the decision hook was asked: nothing ran
        return end(call_id, {}, false);
    if (call.outcome) { // gone while the tool's output was delivered
        call.record.rule += "; the caller went away before its output was delivered";
        return delivered(call_id);
    }
    call.tool->kill_group();
    call.record.rule += "; the caller went away, the tool was killed";
    finish(call_id);
}

void Broker::finish(uint64_t call_id)
{
    Call& call = calls_.at(call_id);
    bool signaled = false;
    int status = call.tool->reap(signaled);
    call.record.duration_ms = call.tool->elapsed().count();
    if (signaled)
        call.record.signal = status - 128;
    else
        call.record.status = status;
    call.outcome = signaled ? Answer{Answer::Kind::signaled, status - 128, {}} : Answer{Answer::Kind::exited, status, {}};
    watches_.remove(std::exchange(call.tool_watch, 0));
    // The shim exits when answered: what the tool wrote reaches the caller first.
    call.relay->tool_ended();
    if (call.relay->done())
        return delivered(call_id);
    call.relay_watch = watches_.add({Kind::relay, call_id, call.relay->done_fd()}, EPOLLIN);
}

void Broker::delivered(uint64_t call_id)
{
    end(call_id, *calls_.at(call_id).outcome);
}

// What the call made on the host gone, its record (unless none was made), its answer, and its end.
void Broker::end(uint64_t call_id, const Answer& answer, bool recorded)
{
    auto it = calls_.find(call_id);
    Call& call = it->second;
    watches_.remove(call.connection_watch);
    watches_.remove(call.hook_watch);
    watches_.remove(call.tool_watch);
    watches_.remove(call.relay_watch);
    drop_ask(call_id);
    bool ran = call.tool.has_value();
    UniqueFd tool_mounts = ran ? call.tool->release_mounts() : UniqueFd();
    call.tool.reset(); // a tool still running is killed and reaped
    call.confinement.reset();
    if (call.relay) {
        call.relay->stop(); // every thread joined: the counts are final
        if (ran) {
            call.record.bytes_in = call.relay->bytes_in();
            call.record.bytes_out = call.relay->bytes_out();
        }
        call.relay.reset();
    }
    if (recorded)
        record(call.cgroup_id, audit::command_json(containers_.at(call.cgroup_id).registration.id,
                                                   audit::wall_now_ns(), call.record));
    if (!answer.text.empty() || answer.kind != Answer::Kind::failed)
        send_answer(call.connection.get(), answer);
    calls_.erase(it);
    deferred_close_.close(std::move(tool_mounts));
}

void Broker::record(uint64_t cgroup_id, const nlohmann::ordered_json& record)
{
    Served& served = containers_.at(cgroup_id);
    if (!served.trail)
        served.trail.emplace(served.registration.trail);
    served.trail->append(record);
}

void Broker::on_tick()
{
    auto now = Clock::now();
    std::vector<uint64_t> late;
    for (const auto& [id, call] : calls_)
        if (!call.tool && !call.request && call.deadline <= now) // a call the decision hook holds has its timeout
            late.push_back(id);
    for (uint64_t id : late)
        end(id, {Answer::Kind::failed, 0, "no call came within 5 s of the connection"}, false);
    expire_asks_and_grants();
    std::vector<uint64_t> gone;
    for (const auto& [cgroup_id, served] : containers_)
        if (!files::exists(registration_path(cgroup_id)))
            gone.push_back(cgroup_id);
    for (uint64_t cgroup_id : gone)
        forget(cgroup_id);
    add_registered();
}

void Broker::dispatch(const Watch& w, uint32_t events)
{
    switch (w.kind) {
    case Kind::listener: return accept_calls(w.key, w.fd);
    case Kind::connection: return on_connection(w.key, events);
    case Kind::hook: return on_hook_answer(w.key);
    case Kind::tool: return finish(w.key);
    case Kind::relay: return delivered(w.key);
    }
}

void Broker::run()
{
    daemon::Life life{daemon_, lock_.get(), watches_.epoll_fd(), listener_, {.u64 = watches_.control_key}, tick,
                      idle_linger,
                      [&](const epoll_event& event) {
                          watches_.route(
                              event, [&] { serve_request(); },
                              [&](const Watch& w, uint32_t events) { dispatch(w, events); });
                      },
                      [&] {
                          on_tick();
                          return !containers_.empty() || !calls_.empty();
                      },
                      [&] { return !read_registrations().empty(); }};
    life.serve();
}

int run_broker()
{
    Broker broker;
    return daemon::run("command broker", [&] { return broker.start(); }, [&] { broker.run(); });
}

} // namespace cerberus::broker
