// SPDX-License-Identifier: Apache-2.0
// The broker's part of asks (audit/asks.hpp): a call an ask pattern matched is
// held (the shim waits) until root answers over broker.sock, a grant allows
// it, its deadline passes or its caller goes away.
#include "base/duration.hpp"
#include "base/error.hpp"
#include "broker/broker_loop.hpp"
#include "policy/policy_commands.hpp"

#include <spdlog/spdlog.h>

namespace cerberus::broker {

void Broker::ask_operator(uint64_t call_id, const Request& request, std::vector<UniqueFd> stdio)
{
    Call& call = calls_.at(call_id);
    const Served& served = containers_.at(call.cgroup_id);
    call.record.backend = "ask";
    int64_t now = audit::wall_now_ns();
    audit::AskSubject subject{.tool = request.tool, .args = request.args};
    if (const Grant* grant = grants_.match(call.cgroup_id, subject, now)) {
        call.record.verdict = "allowed";
        call.record.answer = "grant " + grant->id;
        call.record.rule += "; grant " + grant->id;
        return run_decided(call_id, request, stdio);
    }
    PendingAsk ask;
    ask.container = served.registration.id;
    ask.cgroup_id = call.cgroup_id;
    ask.subject = std::move(subject);
    ask.cwd = request.cwd;
    ask.rule = call.record.rule;
    ask.asked_ns = now;
    auto timeout = policy::ask_timeout_of(served.registration.commands.at(request.tool));
    ask.deadline_ns = now + std::chrono::duration_cast<std::chrono::nanoseconds>(timeout).count();
    try {
        ask.pid = identify_caller(call.connection.get(), cgroup2_, call.cgroup_id).pid;
        do
            ask.id = audit::new_ask_id();
        while (asked_.count(ask.id) || answered_.knows(ask.id));
        audit::write_pending_ask(ask);
    } catch (const Error& e) {
        call.record.verdict = "failed";
        call.record.rule += "; " + std::string(e.what());
        return end(call_id, {Answer::Kind::failed, 0, e.what()});
    }
    record(call.cgroup_id, audit::ask_json(ask.container, now,
                                           {ask.id, request.tool, request.args, ask.cwd, ask.pid, ask.rule, ask.deadline_ns}));
    spdlog::info("{}: ask {} held: {} ({})", ask.container, ask.id, request.tool, ask.rule);
    asked_[ask.id] = call_id;
    call.ask = std::move(ask);
    call.request = request;
    call.stdio = std::move(stdio);
}

std::string Broker::answer_operator(const std::string& request, const ucred& peer)
{
    return audit::answer_operator(
        request, peer.uid, [&](const std::string& id, const AskAnswer& answer, uid_t uid) { return answer_ask(id, answer, uid); },
        grants_);
}

std::string Broker::answer_ask(const std::string& id, const AskAnswer& answer, uid_t uid)
{
    auto it = asked_.find(id);
    if (it == asked_.end())
        return answered_.told(id);
    uint64_t call_id = it->second;
    const PendingAsk& ask = *calls_.at(call_id).ask;
    std::string words = audit::answered_words(answer, uid);
    if (auto grant = audit::grant_for(ask, answer, uid, audit::wall_now_ns()))
        words += ", grant " + grants_.add(std::move(*grant)).id;
    settle_ask(call_id, answer.kind != AskAnswer::Kind::deny, audit::ask_answer_text(answer), uid, words);
    return "ok: ask " + id + " " + words;
}

// The ask's end: remembered (a second answer is told this one), its file gone, the call run or denied.
void Broker::settle_ask(uint64_t call_id, bool allowed, const std::string& how, std::optional<uid_t> by,
                        const std::string& words)
{
    Call& call = calls_.at(call_id);
    std::string id = call.ask->id;
    answered_.remember(id, words);
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
    audit::remove_pending_ask(call.ask->id);
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
        auto timeout =
            policy::ask_timeout_of(containers_.at(call.cgroup_id).registration.commands.at(call.ask->subject.tool));
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
    grants_.drop_if([&](const Grant& grant) { return !grant.subject.is_host() && !containers_.count(grant.cgroup_id); });
    for (const auto& ask : audit::read_pending_asks()) {
        if (ask.subject.is_host())
            continue; // the DNS gate's
        audit::remove_pending_ask(ask.id);
        if (!containers_.count(ask.cgroup_id))
            continue;
        audit::CommandCall call{.tool = ask.subject.tool, .args = ask.subject.args, .cwd = ask.cwd, .verdict = "denied",
                                .backend = "ask",
                                .rule = ask.rule + "; ask " + ask.id + " was pending when the command broker ended",
                                .answer = "broker ended"};
        record(ask.cgroup_id, audit::command_json(ask.container, audit::wall_now_ns(), call));
    }
}

} // namespace cerberus::broker
