// SPDX-License-Identifier: Apache-2.0
// The broker's part of asks (asks.hpp): a call an ask pattern matched is
// held (the shim waits) until root answers over broker.sock, a grant allows
// it, its deadline passes or its caller goes away.
#include "base/duration.hpp"
#include "base/error.hpp"
#include "broker/broker_loop.hpp"
#include "policy/policy_commands.hpp"

#include <spdlog/spdlog.h>

#include <sstream>

namespace cerberus::broker {
namespace {

constexpr size_t answers_remembered = 1024;

std::string answered_already(const std::string& id, const std::string& how)
{
    return "error: ask " + id + " was answered already: " + how;
}

} // namespace

void Broker::ask_operator(uint64_t call_id, const Request& request, std::vector<UniqueFd> stdio)
{
    Call& call = calls_.at(call_id);
    const Served& served = containers_.at(call.cgroup_id);
    call.record.backend = "ask";
    int64_t now = audit::wall_now_ns();
    if (const Grant* grant = grants_.match(call.cgroup_id, request.tool, request.args, now)) {
        call.record.verdict = "allowed";
        call.record.answer = "grant " + grant->id;
        call.record.rule += "; grant " + grant->id;
        return run_decided(call_id, request, stdio);
    }
    PendingAsk ask;
    ask.container = served.registration.id;
    ask.cgroup_id = call.cgroup_id;
    ask.tool = request.tool;
    ask.args = request.args;
    ask.cwd = request.cwd;
    ask.rule = call.record.rule;
    ask.asked_ns = now;
    auto timeout = policy::ask_timeout_of(served.registration.commands.at(request.tool));
    ask.deadline_ns = now + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
    try {
        ask.pid = identify_caller(call.connection.get(), cgroup2_, call.cgroup_id).pid;
        do
            ask.id = new_ask_id();
        while (asked_.count(ask.id) || answered_.count(ask.id));
        write_pending_ask(ask);
    } catch (const Error& e) {
        call.record.verdict = "failed";
        call.record.rule += "; " + std::string(e.what());
        return end(call_id, {Answer::Kind::failed, 0, e.what()});
    }
    record(call.cgroup_id, audit::ask_json(ask.container, now,
                                           {ask.id, ask.tool, ask.args, ask.cwd, ask.pid, ask.rule, ask.deadline_ns}));
    spdlog::info("{}: ask {} held: {} ({})", ask.container, ask.id, ask.tool, ask.rule);
    asked_[ask.id] = call_id;
    call.ask = std::move(ask);
    call.request = request;
    call.stdio = std::move(stdio);
}

// "ask <id> once|for <duration>|always|deny", "revoke <grant id>": root's
// alone (the socket is root's too, in a directory no container sees).
std::string Broker::answer_operator(const std::string& request, const ucred& peer)
{
    if (peer.uid != 0)
        return "error: only root answers asks (the request came from uid " + std::to_string(peer.uid) + ")";
    std::istringstream words(request);
    std::string verb, id;
    words >> verb >> id;
    std::string rest;
    std::getline(words >> std::ws, rest);
    try {
        if (verb == "ask" && !id.empty())
            return answer_ask(id, parse_ask_answer(rest), peer.uid);
        if (verb == "revoke" && !id.empty() && rest.empty())
            return grants_.revoke(id) ? "ok: grant " + id + " revoked" : "error: no grant " + id;
    } catch (const Error& e) {
        return std::string("error: ") + e.what();
    }
    return "unknown request";
}

std::string Broker::answer_ask(const std::string& id, const AskAnswer& answer, uid_t uid)
{
    auto it = asked_.find(id);
    if (it == asked_.end()) {
        if (auto done = answered_.find(id); done != answered_.end())
            return answered_already(id, done->second);
        return "error: no pending ask " + id + " (see cerberus ask list)";
    }
    uint64_t call_id = it->second;
    const PendingAsk& ask = *calls_.at(call_id).ask;
    std::string words = answered_words(answer, uid);
    if (answer.kind == AskAnswer::Kind::lasting || answer.kind == AskAnswer::Kind::always) {
        Grant grant{.container = ask.container, .cgroup_id = ask.cgroup_id, .tool = ask.tool, .args = ask.args,
                    .granted_by = uid, .granted_ns = audit::wall_now_ns()};
        if (answer.kind == AskAnswer::Kind::lasting)
            grant.expires_ns = grant.granted_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(answer.lasting).count();
        words += ", grant " + grants_.add(std::move(grant)).id;
    }
    settle_ask(call_id, answer.kind != AskAnswer::Kind::deny, ask_answer_text(answer), uid, words);
    return "ok: ask " + id + " " + words;
}

// The ask's end: remembered (a second answer is told this one), its file gone, the call run or denied.
void Broker::settle_ask(uint64_t call_id, bool allowed, const std::string& how, std::optional<uid_t> by,
                        const std::string& words)
{
    Call& call = calls_.at(call_id);
    std::string id = call.ask->id;
    answered_[id] = words;
    answered_order_.push_back(id);
    if (answered_order_.size() > answers_remembered) {
        answered_.erase(answered_order_.front());
        answered_order_.pop_front();
    }
    drop_ask(call_id);
    call.record.answer = how;
    call.record.answered_by = by;
    call.record.rule += "; ask " + id + " " + words;
    if (!allowed) {
        call.record.verdict = "denied";
        return end(call_id, {Answer::Kind::denied, 0, "ask " + id + " " + words});
    }
    call.record.verdict = "allowed";
    Request request = std::move(*call.request);
    call.request.reset();
    std::vector<UniqueFd> stdio = std::move(call.stdio);
    run_decided(call_id, request, stdio);
}

void Broker::drop_ask(uint64_t call_id) noexcept
{
    Call& call = calls_.at(call_id);
    if (!call.ask)
        return;
    asked_.erase(call.ask->id);
    remove_pending_ask(call.ask->id);
    call.ask.reset();
}

void Broker::expire_asks_and_grants()
{
    int64_t now = audit::wall_now_ns();
    std::vector<uint64_t> late;
    for (const auto& [id, call_id] : asked_)
        if (calls_.at(call_id).ask->deadline_ns <= now)
            late.push_back(call_id);
    for (uint64_t call_id : late) {
        const Call& call = calls_.at(call_id);
        auto timeout = policy::ask_timeout_of(containers_.at(call.cgroup_id).registration.commands.at(call.ask->tool));
        settle_ask(call_id, false, "timeout", std::nullopt, "timed out after " + duration_text(timeout) + " unanswered");
    }
    try {
        grants_.drop_expired(now);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

// At start: the grants of containers still served, and the asks a dead
// broker held, whose calls died with it (their shims were told it ended
// without answering), recorded as denied.
void Broker::recover_asks()
{
    grants_.load();
    std::vector<uint64_t> gone;
    for (const auto& grant : grants_.grants())
        if (!containers_.count(grant.cgroup_id))
            gone.push_back(grant.cgroup_id);
    for (uint64_t cgroup_id : gone)
        grants_.drop_container(cgroup_id);
    for (const auto& ask : read_pending_asks()) {
        remove_pending_ask(ask.id);
        if (!containers_.count(ask.cgroup_id))
            continue;
        audit::CommandCall call{.tool = ask.tool, .args = ask.args, .cwd = ask.cwd, .verdict = "denied",
                                .backend = "ask",
                                .rule = ask.rule + "; ask " + ask.id + " was pending when the command broker ended",
                                .answer = "broker ended"};
        record(ask.cgroup_id, audit::command_json(ask.container, audit::wall_now_ns(), call));
    }
}

} // namespace cerberus::broker
