// SPDX-License-Identifier: Apache-2.0
// The DNS gate's part of asks (audit/asks.hpp): a lookup of a name ask_hosts
// lists is held (the agent's resolver waits) until root answers over
// gate.sock, a grant of the name allows it, or its deadline passes; then it
// goes on as a lookup of an allowed name (forwarded, its addresses admitted
// with the ask entries' ports) or is answered REFUSED as an unlisted one.
#include "base/duration.hpp"
#include "base/error.hpp"
#include "dns/dns_gate_loop.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace cerberus::dns {
namespace {

// The trail's words for the entry that asks: `ask_hosts "*.example.org:443"`.
std::string ask_rule(const Registration& registration, const std::string& name)
{
    for (const auto& rule : registration.ask_names)
        if (policy::host_name_matches(rule.pattern, name))
            return "ask_hosts \"" + rule.pattern + "\"";
    return "ask_hosts";
}

} // namespace

void Gate::ask_operator(Container& container, const Client& client, const Query& query,
                        std::span<const uint8_t> message, NamePorts ports)
{
    uint64_t cgroup_id = container.registration.cgroup_id;
    const std::string& name = query.question.name;
    int64_t now = audit::wall_now_ns();
    audit::AskSubject subject{.host = name};
    if (grants_.match(cgroup_id, subject, now))
        return forward(container, client, query, message, std::move(ports));
    HeldQuery held{client, query, {message.begin(), message.end()}};
    auto same = std::find_if(asked_.begin(), asked_.end(), [&](const auto& entry) {
        return entry.second.ask.cgroup_id == cgroup_id && entry.second.ask.subject == subject;
    });
    if (same != asked_.end()) {
        if (same->second.queries.size() < max_held_per_ask)
            same->second.queries.push_back(std::move(held));
        return;
    }
    std::string rule = ask_rule(container.registration, name);
    auto asked_here = std::count_if(asked_.begin(), asked_.end(),
                                    [&](const auto& entry) { return entry.second.ask.cgroup_id == cgroup_id; });
    if (static_cast<size_t>(asked_here) >= max_asks_per_container) {
        record(container, RecordKind::name,
               {name, type_name(query.question.type), "refused",
                rule + "; " + std::to_string(max_asks_per_container) + " asks of the container are pending", ""});
        return reply(client, refused_reply(message));
    }
    HeldAsk hold;
    hold.ask.container = container.registration.id;
    hold.ask.cgroup_id = cgroup_id;
    hold.ask.subject = std::move(subject);
    hold.ask.rule = rule;
    hold.ask.asked_ns = now;
    hold.ask.deadline_ns =
        now + std::chrono::duration_cast<std::chrono::nanoseconds>(container.registration.ask_timeout).count();
    hold.ports = std::move(ports);
    try {
        do
            hold.ask.id = audit::new_ask_id();
        while (asked_.count(hold.ask.id) || answered_.knows(hold.ask.id));
        audit::write_pending_ask(hold.ask);
    } catch (const Error& e) {
        record(container, RecordKind::name,
               {name, type_name(query.question.type), "refused", rule + "; " + e.what(), ""});
        return reply(client, refused_reply(message));
    }
    if (client.tcp_conn)
        if (auto conn = conns_.find(client.tcp_conn); conn != conns_.end()) // kept open while it waits
            conn->second.idle_deadline = Clock::now() + container.registration.ask_timeout + tcp_client_idle;
    if (!container.trail)
        container.trail.emplace(container.registration.trail);
    container.trail->append(audit::ask_json(container.registration.id, now,
                                            {hold.ask.id, name, type_name(query.question.type), rule,
                                             hold.ask.deadline_ns}));
    spdlog::info("{}: ask {} held: {} ({})", hold.ask.container, hold.ask.id, name, rule);
    hold.queries.push_back(std::move(held));
    std::string id = hold.ask.id;
    asked_.emplace(id, std::move(hold));
}

std::string Gate::answer_ask(const std::string& id, const audit::AskAnswer& answer, uid_t uid)
{
    auto it = asked_.find(id);
    if (it == asked_.end())
        return answered_.told(id);
    std::string words = audit::answered_words(answer, uid);
    if (auto grant = audit::grant_for(it->second.ask, answer, uid, audit::wall_now_ns()))
        words += ", grant " + grants_.add(std::move(*grant)).id;
    settle_ask(id, answer.kind != audit::AskAnswer::Kind::deny, audit::ask_answer_text(answer), uid, words);
    return "ok: ask " + id + " " + words;
}

// The ask's end: remembered (a second answer is told this one), its file
// gone, its queries forwarded as an allowed name's or refused.
void Gate::settle_ask(const std::string& id, bool allowed, const std::string& how, std::optional<uid_t> by,
                      const std::string& words)
{
    auto it = asked_.find(id);
    HeldAsk held = std::move(it->second);
    asked_.erase(it);
    audit::remove_pending_ask(id);
    answered_.remember(id, words);
    auto found = containers_.find(held.ask.cgroup_id);
    if (found == containers_.end())
        return;
    Container& container = found->second;
    const Question& question = held.queries.front().query.question;
    std::optional<uint32_t> answered_by;
    if (by)
        answered_by = *by;
    record(container, RecordKind::name,
           {question.name, type_name(question.type), allowed ? "allowed" : "refused",
            held.ask.rule + "; ask " + id + " " + words, "", how, answered_by});
    for (const HeldQuery& query : held.queries) {
        if (allowed)
            forward(container, query.client, query.query, query.message, held.ports);
        else
            reply(query.client, refused_reply(query.message));
    }
}

void Gate::expire_asks_and_grants()
{
    int64_t now = audit::wall_now_ns();
    std::vector<std::string> late;
    for (const auto& [id, held] : asked_)
        if (held.ask.deadline_ns <= now)
            late.push_back(id);
    for (const auto& id : late) {
        auto timeout = containers_.count(asked_.at(id).ask.cgroup_id)
                           ? containers_.at(asked_.at(id).ask.cgroup_id).registration.ask_timeout
                           : std::chrono::milliseconds(0);
        settle_ask(id, false, "timeout", std::nullopt, "timed out after " + duration_text(timeout) + " unanswered");
    }
    try {
        grants_.drop_expired(now);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

// At start: the grants of names of containers still served, and the asks a
// dead gate held, whose queries died with it (the resolvers time out or ask
// again), recorded as refused.
void Gate::recover_asks()
{
    grants_.load();
    try {
        grants_.drop_if(
            [&](const audit::Grant& grant) { return grant.subject.is_host() && !containers_.count(grant.cgroup_id); });
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
    for (const auto& ask : audit::read_pending_asks()) {
        if (!ask.subject.is_host())
            continue; // the command broker's
        audit::remove_pending_ask(ask.id);
        if (auto it = containers_.find(ask.cgroup_id); it != containers_.end())
            record(it->second, RecordKind::name,
                   {ask.subject.host, "", "refused",
                    ask.rule + "; ask " + ask.id + " was pending when the DNS gate ended", "", "gate ended",
                    std::nullopt});
    }
}

// The container's held asks and grants go with it (its queries with its sockets).
void Gate::forget_asks(uint64_t cgroup_id)
{
    for (auto it = asked_.begin(); it != asked_.end();) {
        if (it->second.ask.cgroup_id != cgroup_id) {
            ++it;
            continue;
        }
        audit::remove_pending_ask(it->first);
        answered_.remember(it->first, "its container was deleted");
        it = asked_.erase(it);
    }
    try {
        grants_.drop_container(cgroup_id);
    } catch (const Error& e) {
        spdlog::warn("{}", e.what());
    }
}

} // namespace cerberus::dns
