// SPDX-License-Identifier: Apache-2.0
#include "broker/asks.hpp"

#include "base/duration.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "broker/broker_registry.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

namespace cerberus::broker {
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

} // namespace

nlohmann::json to_json(const PendingAsk& ask)
{
    return {{"id", ask.id},     {"container", ask.container}, {"cgroup_id", ask.cgroup_id},
            {"tool", ask.tool}, {"args", ask.args},           {"cwd", ask.cwd},
            {"pid", ask.pid},   {"rule", ask.rule},           {"asked_ns", ask.asked_ns},
            {"deadline_ns", ask.deadline_ns}};
}

PendingAsk pending_ask_from_json(const nlohmann::json& j)
{
    PendingAsk ask;
    ask.id = j.at("id").get<std::string>();
    ask.container = j.at("container").get<std::string>();
    ask.cgroup_id = j.at("cgroup_id").get<uint64_t>();
    ask.tool = j.at("tool").get<std::string>();
    ask.args = j.at("args").get<std::vector<std::string>>();
    ask.cwd = j.at("cwd").get<std::string>();
    ask.pid = j.at("pid").get<pid_t>();
    ask.rule = j.at("rule").get<std::string>();
    ask.asked_ns = j.at("asked_ns").get<int64_t>();
    ask.deadline_ns = j.at("deadline_ns").get<int64_t>();
    return ask;
}

std::string asks_dir()
{
    return std::string(run_dir) + "/asks";
}

std::string grants_path()
{
    return std::string(run_dir) + "/grants.json";
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
    json j = {{"id", grant.id},     {"container", grant.container}, {"cgroup_id", grant.cgroup_id},
              {"tool", grant.tool}, {"args", grant.args},           {"granted_by", grant.granted_by},
              {"granted_ns", grant.granted_ns}};
    j["expires_ns"] = grant.expires_ns ? json(*grant.expires_ns) : json(nullptr);
    return j;
}

Grant grant_from_json(const nlohmann::json& j)
{
    Grant grant;
    grant.id = j.at("id").get<std::string>();
    grant.container = j.at("container").get<std::string>();
    grant.cgroup_id = j.at("cgroup_id").get<uint64_t>();
    grant.tool = j.at("tool").get<std::string>();
    grant.args = j.at("args").get<std::vector<std::string>>();
    grant.granted_by = j.at("granted_by").get<uid_t>();
    grant.granted_ns = j.at("granted_ns").get<int64_t>();
    if (!j.at("expires_ns").is_null())
        grant.expires_ns = j.at("expires_ns").get<int64_t>();
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

const Grant* GrantBook::match(uint64_t cgroup_id, const std::string& tool, const std::vector<std::string>& args,
                              int64_t now_ns) const
{
    for (const auto& grant : grants_)
        if (grant.cgroup_id == cgroup_id && grant.tool == tool && grant.args == args &&
            (!grant.expires_ns || *grant.expires_ns > now_ns))
            return &grant;
    return nullptr;
}

const Grant& GrantBook::add(Grant grant)
{
    grant.id = "g-" + random_hex();
    grants_.push_back(std::move(grant));
    save();
    return grants_.back();
}

bool GrantBook::revoke(const std::string& id)
{
    bool gone = std::erase_if(grants_, [&](const Grant& g) { return g.id == id; }) != 0;
    if (gone)
        save();
    return gone;
}

bool GrantBook::drop_expired(int64_t now_ns)
{
    bool gone = std::erase_if(grants_, [&](const Grant& g) { return g.expires_ns && *g.expires_ns <= now_ns; }) != 0;
    if (gone)
        save();
    return gone;
}

bool GrantBook::drop_container(uint64_t cgroup_id)
{
    bool gone = std::erase_if(grants_, [&](const Grant& g) { return g.cgroup_id == cgroup_id; }) != 0;
    if (gone)
        save();
    return gone;
}

void GrantBook::save() const
{
    json all = json::array();
    for (const auto& grant : grants_)
        all.push_back(to_json(grant));
    std::string dir = path_.substr(0, path_.rfind('/'));
    files::make_dirs(dir, 0700);
    files::write_file_atomic(path_, all.dump() + "\n", 0600);
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

} // namespace cerberus::broker
