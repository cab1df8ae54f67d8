// SPDX-License-Identifier: Apache-2.0
#include "audit/asks.hpp"

#include "audit/audit_format.hpp"

#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "base/fd.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace cerberus::audit {
namespace {

using nlohmann::json;

std::string random_hex()
{
    uint32_t value = 0;
    if (getrandom(&value, sizeof value, 0) != sizeof value)
        throw_errno("getrandom");
    char text[9];
    std::snprintf(text, sizeof text, "%08x", value);
    return text;
}

void put_subject(json& j, const AskSubject& subject)
{
    if (subject.is_host()) {
        j["host"] = subject.host;
        return;
    }
    j["tool"] = subject.tool;
    j["args"] = subject.args;
}

AskSubject subject_from_json(const json& j)
{
    if (j.contains("host"))
        return {.host = j.at("host").get<std::string>()};
    return {.tool = j.at("tool").get<std::string>(), .args = j.at("args").get<std::vector<std::string>>()};
}

} // namespace

std::string subject_text(const AskSubject& subject)
{
    if (subject.is_host())
        return "host " + subject.host;
    std::string text = subject.tool;
    for (const auto& arg : subject.args)
        text += " " + arg;
    return text;
}

nlohmann::json to_json(const PendingAsk& ask)
{
    json j = {{"id", ask.id}, {"container", ask.container}, {"cgroup_id", ask.cgroup_id}};
    put_subject(j, ask.subject);
    if (!ask.subject.is_host()) {
        j["cwd"] = ask.cwd;
        j["pid"] = ask.pid;
    }
    j["rule"] = ask.rule;
    j["asked_ns"] = ask.asked_ns;
    j["deadline_ns"] = ask.deadline_ns;
    return j;
}

PendingAsk pending_ask_from_json(const nlohmann::json& j)
{
    PendingAsk ask;
    ask.id = j.at("id").get<std::string>();
    ask.container = j.at("container").get<std::string>();
    ask.cgroup_id = j.at("cgroup_id").get<uint64_t>();
    ask.subject = subject_from_json(j);
    if (!ask.subject.is_host()) {
        ask.cwd = j.at("cwd").get<std::string>();
        ask.pid = j.at("pid").get<pid_t>();
    }
    ask.rule = j.at("rule").get<std::string>();
    ask.asked_ns = j.at("asked_ns").get<int64_t>();
    ask.deadline_ns = j.at("deadline_ns").get<int64_t>();
    return ask;
}

std::string asks_dir()
{
    return std::string(asks_run_dir) + "/asks";
}

std::string grants_path()
{
    return std::string(asks_run_dir) + "/grants.json";
}

std::string new_ask_id()
{
    return random_hex();
}

void write_pending_ask(const PendingAsk& ask)
{
    files::make_dirs(asks_dir(), 0700);
    files::write_file_atomic(asks_dir() + "/" + ask.id + ".json", to_json(ask).dump() + "\n", 0600);
}

void remove_pending_ask(const std::string& id) noexcept
{
    unlink((asks_dir() + "/" + id + ".json").c_str());
}

std::vector<PendingAsk> read_pending_asks()
{
    std::vector<PendingAsk> asks;
    for (const auto& entry : files::list_dir(asks_dir())) {
        if (!entry.name.ends_with(".json"))
            continue;
        try {
            auto text = files::read_file_if_exists(asks_dir() + "/" + entry.name);
            if (text)
                asks.push_back(pending_ask_from_json(json::parse(*text)));
        } catch (const std::exception& e) {
            spdlog::warn("{}/{}: {}", asks_dir(), entry.name, e.what());
        }
    }
    std::sort(asks.begin(), asks.end(), [](const PendingAsk& a, const PendingAsk& b) { return a.asked_ns < b.asked_ns; });
    return asks;
}

std::optional<PendingAsk> read_pending_ask(const std::string& id)
{
    auto text = files::read_file_if_exists(asks_dir() + "/" + id + ".json");
    if (!text)
        return std::nullopt;
    return pending_ask_from_json(json::parse(*text));
}

AskAnswer parse_ask_answer(const std::string& text)
{
    if (text == "once")
        return {AskAnswer::Kind::once, {}};
    if (text == "always")
        return {AskAnswer::Kind::always, {}};
    if (text == "deny")
        return {AskAnswer::Kind::deny, {}};
    if (text.starts_with("for ")) {
        auto lasting = parse_duration(text.substr(4));
        if (!lasting)
            throw Error("\"" + text.substr(4) + "\" is not a duration (a whole number and a unit: \"30s\", \"10m\", \"2h\")",
                        EINVAL);
        return {AskAnswer::Kind::lasting, *lasting};
    }
    throw Error("\"" + text + "\" is no answer (once, for DURATION, always, deny)", EINVAL);
}

std::string ask_answer_text(const AskAnswer& answer)
{
    switch (answer.kind) {
    case AskAnswer::Kind::once: return "once";
    case AskAnswer::Kind::lasting: return "for " + duration_text(answer.lasting);
    case AskAnswer::Kind::always: return "always";
    case AskAnswer::Kind::deny: break;
    }
    return "deny";
}

std::string answered_words(const AskAnswer& answer, uid_t uid)
{
    std::string by = " by uid " + std::to_string(uid);
    return answer.kind == AskAnswer::Kind::deny ? "denied" + by : "allowed " + ask_answer_text(answer) + by;
}

nlohmann::json to_json(const Grant& grant)
{
    json j = {{"id", grant.id}, {"container", grant.container}, {"cgroup_id", grant.cgroup_id}};
    put_subject(j, grant.subject);
    j["granted_by"] = grant.granted_by;
    j["granted_ns"] = grant.granted_ns;
    j["expires_ns"] = grant.expires_ns ? json(*grant.expires_ns) : json(nullptr);
    return j;
}

Grant grant_from_json(const nlohmann::json& j)
{
    Grant grant;
    grant.id = j.at("id").get<std::string>();
    grant.container = j.at("container").get<std::string>();
    grant.cgroup_id = j.at("cgroup_id").get<uint64_t>();
    grant.subject = subject_from_json(j);
    grant.granted_by = j.at("granted_by").get<uid_t>();
    grant.granted_ns = j.at("granted_ns").get<int64_t>();
    if (!j.at("expires_ns").is_null())
        grant.expires_ns = j.at("expires_ns").get<int64_t>();
    return grant;
}

std::optional<Grant> grant_for(const PendingAsk& ask, const AskAnswer& answer, uid_t uid, int64_t now_ns)
{
    if (answer.kind != AskAnswer::Kind::lasting && answer.kind != AskAnswer::Kind::always)
        return std::nullopt;
    Grant grant{.container = ask.container, .cgroup_id = ask.cgroup_id, .subject = ask.subject, .granted_by = uid,
                .granted_ns = now_ns};
    if (answer.kind == AskAnswer::Kind::lasting)
        grant.expires_ns = now_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(answer.lasting).count();
    return grant;
}

void GrantBook::load()
{
    try {
        grants_ = read_grants(path_);
    } catch (const std::exception& e) {
        spdlog::warn("{}: {}; no grant kept", path_, e.what());
        grants_.clear();
    }
}

const Grant* GrantBook::match(uint64_t cgroup_id, const AskSubject& subject, int64_t now_ns) const
{
    for (const auto& grant : grants_)
        if (grant.cgroup_id == cgroup_id && grant.subject == subject && (!grant.expires_ns || *grant.expires_ns > now_ns))
            return &grant;
    return nullptr;
}

Grant GrantBook::add(Grant grant)
{
    grant.id = "g-" + random_hex();
    change([&](std::vector<Grant>& grants) {
        grants.push_back(grant);
        return true;
    });
    return grant;
}

bool GrantBook::revoke(const std::string& id)
{
    return drop_if([&](const Grant& g) { return g.id == id; });
}

bool GrantBook::drop_expired(int64_t now_ns)
{
    if (std::none_of(grants_.begin(), grants_.end(), [&](const Grant& g) { return g.expires_ns && *g.expires_ns <= now_ns; }))
        return false; // each tick asks: the file is read only when one of those known is due
    return drop_if([&](const Grant& g) { return g.expires_ns && *g.expires_ns <= now_ns; });
}

bool GrantBook::drop_container(uint64_t cgroup_id)
{
    return drop_if([&](const Grant& g) { return g.cgroup_id == cgroup_id; });
}

bool GrantBook::drop_if(const std::function<bool(const Grant&)>& gone)
{
    return change([&](std::vector<Grant>& grants) { return std::erase_if(grants, gone) != 0; });
}

bool GrantBook::change(const std::function<bool(std::vector<Grant>&)>& change)
{
    std::string dir = path_.substr(0, path_.rfind('/'));
    files::make_dirs(dir, 0700);
    std::string lock_path = path_ + ".lock";
    UniqueFd lock(open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!lock)
        throw_errno("opening " + lock_path);
    check(flock(lock.get(), LOCK_EX), "locking " + lock_path);
    load(); // the other holder's changes since
    if (!change(grants_))
        return false;
    json all = json::array();
    for (const auto& grant : grants_)
        all.push_back(to_json(grant));
    files::write_file_atomic(path_, all.dump() + "\n", 0600);
    return true;
}

void AnsweredAsks::remember(const std::string& id, const std::string& words)
{
    constexpr size_t remembered = 1024;
    words_[id] = words;
    order_.push_back(id);
    if (order_.size() > remembered) {
        words_.erase(order_.front());
        order_.pop_front();
    }
}

std::string AnsweredAsks::told(const std::string& id) const
{
    if (auto done = words_.find(id); done != words_.end())
        return "error: ask " + id + " was answered already: " + done->second;
    return "error: no pending ask " + id + " (see cerberus ask list)";
}

std::string answer_operator(const std::string& request, uid_t peer_uid, const AnswerAsk& answer, GrantBook& grants)
{
    if (peer_uid != 0)
        return "error: only root answers asks (the request came from uid " + std::to_string(peer_uid) + ")";
    std::istringstream words(request);
    std::string verb, id;
    words >> verb >> id;
    std::string rest;
    std::getline(words >> std::ws, rest);
    try {
        if (verb == "ask" && !id.empty())
            return answer(id, parse_ask_answer(rest), peer_uid);
        if (verb == "revoke" && !id.empty() && rest.empty())
            return grants.revoke(id) ? "ok: grant " + id + " revoked" : "error: no grant " + id;
    } catch (const Error& e) {
        return std::string("error: ") + e.what();
    }
    return "unknown request";
}

std::vector<Grant> read_grants(const std::string& path)
{
    auto text = files::read_file_if_exists(path);
    std::vector<Grant> grants;
    if (!text)
        return grants;
    for (const auto& j : json::parse(*text))
        grants.push_back(grant_from_json(j));
    return grants;
}

std::map<uint64_t, json> grants_shown()
{
    std::map<uint64_t, json> shown;
    try {
        for (const auto& grant : read_grants(grants_path())) {
            json j = to_json(grant);
            j["expires"] = grant.expires_ns ? json(rfc3339_ns(*grant.expires_ns)) : json("never");
            shown.try_emplace(grant.cgroup_id, json::array()).first->second.push_back(std::move(j));
        }
    } catch (const std::exception&) {
        return {};
    }
    return shown;
}

} // namespace cerberus::audit
