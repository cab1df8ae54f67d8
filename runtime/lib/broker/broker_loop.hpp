// SPDX-License-Identifier: Apache-2.0
// The command broker's event loop (broker_server.hpp says what it does).
#pragma once

#include "audit/audit_format.hpp"
#include "audit/asks.hpp"
#include "audit/audit_trail.hpp"
#include "base/daemon.hpp"
#include "base/event_watches.hpp"
#include "base/fd.hpp"
#include "broker/broker_call.hpp"
#include "broker/broker_protocol.hpp"
#include "broker/broker_registry.hpp"
#include "broker/decision_hook.hpp"
#include "broker/deferred_close.hpp"
#include "broker/stdio_relay.hpp"
#include "broker/tool_policy.hpp"
#include "broker/tool_user.hpp"

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::broker {

using audit::AskAnswer;
using audit::Grant;
using audit::GrantBook;
using audit::PendingAsk;

using Clock = std::chrono::steady_clock;
constexpr auto tick = std::chrono::seconds(1);
constexpr auto idle_linger = std::chrono::seconds(10);
constexpr auto request_wait = std::chrono::seconds(5); // from the connection to the request

enum class Kind { listener, connection, hook, tool, relay };

struct Watch {
    Kind kind;
    uint64_t key; // listener: the cgroup id; connection, tool: the call
    int fd;
};

struct Served {
    Registration registration;
    UniqueFd socket_dir; // O_PATH: the socket is bound through it (its path may be long)
    UniqueFd listener;
    uint64_t watch = 0;
    std::optional<audit::TrailWriter> trail;
};

struct Call {
    uint64_t cgroup_id = 0;
    UniqueFd connection;
    uint64_t connection_watch = 0;
    uint64_t tool_watch = 0;
    uint64_t hook_watch = 0;
    uint64_t relay_watch = 0;
    Clock::time_point deadline; // for the request
    // While the host's decision hook or an operator is asked: the call as it came, its stdio, and where
    // the hook's answer comes.
    std::optional<Request> request;
    std::vector<UniqueFd> stdio;
    UniqueFd hook_answer;
    std::optional<PendingAsk> ask; // while an operator is asked (broker_ask.cpp)
    std::optional<ToolConfinement> confinement; // undone after the tool (declared before it) was reaped
    std::optional<StdioRelay> relay; // stopped after the tool (declared after it) was reaped
    std::optional<RunningTool> tool;
    std::optional<Answer> outcome; // once the tool was reaped: the answer, sent when its output was delivered
    audit::CommandCall record;
};

class Broker {
public:
    bool start();
    void run();

private:
    void dispatch(const Watch& w, uint32_t events);
    void serve_request();
    std::string serve(uint64_t cgroup_id);
    void add_registered();
    void add(Registration registration);
    void forget(uint64_t cgroup_id);
    void on_tick();
    void accept_calls(uint64_t cgroup_id, int listener);
    void read_request(uint64_t call_id);
    void decide(uint64_t call_id, const Request& request, std::vector<UniqueFd> stdio);
    void on_hook_answer(uint64_t call_id);
    void run_decided(uint64_t call_id, const Request& request, const std::vector<UniqueFd>& stdio);
    void launch(uint64_t call_id, const Request& request, const std::vector<UniqueFd>& stdio);
    void on_connection(uint64_t call_id, uint32_t events);
    void finish(uint64_t call_id);
    void delivered(uint64_t call_id);
    void end(uint64_t call_id, const Answer& answer, bool recorded = true);
    void record(uint64_t cgroup_id, const nlohmann::ordered_json& record);
    const ToolUser& tool_user_for(uid_t caller_uid, gid_t caller_gid);
    // broker_ask.cpp
    void ask_operator(uint64_t call_id, const Request& request, std::vector<UniqueFd> stdio);
    std::string answer_operator(const std::string& request, const ucred& peer);
    std::string answer_ask(const std::string& id, const AskAnswer& answer, uid_t uid);
    void settle_ask(uint64_t call_id, bool allowed, const std::string& how, std::optional<uid_t> by,
                    const std::string& words);
    void expire_asks_and_grants();
    void recover_asks();
    void drop_ask(uint64_t call_id) noexcept;

    daemon::Daemon daemon_ = broker_daemon();
    UniqueFd lock_, listener_, host_mnt_;
    daemon::EventWatches<Watch> watches_; // key 0: broker.sock
    std::string cgroup2_;
    std::string workdir_;
    std::map<uint64_t, Served> containers_;
    std::map<uint64_t, Call> calls_;
    uint64_t next_call_ = 1;
    GrantBook grants_{audit::grants_path()};
    std::map<std::string, uint64_t> asked_;       // ask id -> the call it holds
    audit::AnsweredAsks answered_;                // for a late second answer
    std::map<std::pair<uid_t, gid_t>, ToolUser> tool_users_; // by the caller's filesystem ids
    DeferredClose deferred_close_; // the tools' mount namespaces, torn down off the loop
};

} // namespace cerberus::broker
