// SPDX-License-Identifier: Apache-2.0
#include "broker/decision_hook.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <thread>
#include <utility>

namespace cerberus::broker {
namespace {

using nlohmann::json;

[[noreturn]] void invalid(const std::string& file, const std::string& field, const std::string& why)
{
    throw Error(file + ": " + field + ": " + why, EINVAL);
}

// "http://host:port/path" split where the path begins; plain HTTP only (a local endpoint, or one beside it).
std::pair<std::string, std::string> split_url(const std::string& url, const std::string& file,
                                              const std::string& field)
{
    const std::string scheme = "http://";
    if (!url.starts_with(scheme))
        invalid(file, field, "\"" + url + "\": an http:// URL (https is not built in: put the endpoint, or a "
                                          "proxy to it, on this host)");
    size_t slash = url.find('/', scheme.size());
    if (slash == scheme.size())
        invalid(file, field, "\"" + url + "\": no host");
    if (slash == std::string::npos)
        return {url, "/"};
    return {url.substr(0, slash), url.substr(slash)};
}

HookVerdict post(const DecisionHook& hook, const std::string& body)
{
    std::string name = hook.name();
    httplib::Client client(hook.origin);
    auto seconds = static_cast<time_t>(hook.timeout.count() / 1000);
    auto micros = static_cast<time_t>(hook.timeout.count() % 1000 * 1000);
    client.set_connection_timeout(seconds, micros);
    client.set_read_timeout(seconds, micros);
    client.set_write_timeout(seconds, micros);
    auto result = client.Post(hook.path, body, "application/json");
    if (!result)
        return {false, name + ": no answer (" + httplib::to_string(result.error()) + ")"};
    if (result->status != 200)
        return {false, name + ": answered HTTP " + std::to_string(result->status)};
    json answer = json::parse(result->body, nullptr, false);
    if (hook.kind == DecisionHook::Kind::opa) {
        if (!answer.is_object() || !answer.contains("result"))
            return {false, "opa: no result (the rule is undefined for this call)"};
        answer = answer["result"];
    }
    if (!answer.is_object() || !answer.contains("allow") || !answer["allow"].is_boolean())
        return {false, name + ": the answer has no boolean \"allow\""};
    std::string reason = answer.contains("reason") && answer["reason"].is_string() ? answer["reason"].get<std::string>()
                                                                                     : std::string();
    return {answer["allow"].get<bool>(), name + (reason.empty() ? std::string() : ": " + reason)};
}

} // namespace

std::optional<DecisionHook> read_decision_hook(const std::string& path)
{
    auto text = files::read_host_file(path, "the broker's configuration");
    if (!text)
        return std::nullopt;
    json config = json::parse(*text, nullptr, false);
    if (!config.is_object())
        invalid(path, "(document)", "not a JSON object");
    if (!config.contains("decision"))
        return std::nullopt;
    const json& decision = config["decision"];
    if (!decision.is_object())
        invalid(path, "decision", "an object ({\"webhook\" or \"opa\": URL, \"timeout_ms\": N})");
    DecisionHook hook;
    int kinds = 0;
    for (const auto& [key, value] : decision.items()) {
        std::string field = "decision." + key;
        if (key == "webhook" || key == "opa") {
            if (!value.is_string())
                invalid(path, field, "a URL");
            std::tie(hook.origin, hook.path) = split_url(value.get<std::string>(), path, field);
            hook.kind = key == "opa" ? DecisionHook::Kind::opa : DecisionHook::Kind::webhook;
            ++kinds;
        } else if (key == "timeout_ms") {
            if (!value.is_number_unsigned() || value.get<uint64_t>() == 0 || value.get<uint64_t>() > 60000)
                invalid(path, field, "milliseconds, 1 to 60000");
            hook.timeout = std::chrono::milliseconds(value.get<uint64_t>());
        } else {
            invalid(path, field, "unknown (expected \"webhook\" or \"opa\", and \"timeout_ms\")");
        }
    }
    if (kinds != 1)
        invalid(path, "decision", "exactly one of \"webhook\" and \"opa\"");
    return hook;
}

json hook_call(const std::string& container, const std::string& tool, const std::vector<std::string>& args,
               const std::string& cwd, bool rules_allow, const std::string& rule)
{
    return {{"container", container}, {"tool", tool}, {"args", args}, {"cwd", cwd},
            {"rules", {{"allow", rules_allow}, {"rule", rule}}}};
}

UniqueFd ask_hook(const DecisionHook& hook, const json& call)
{
    int pair[2];
    check(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), "socketpair for the decision hook");
    UniqueFd ours(pair[0]);
    UniqueFd theirs(pair[1]);
    std::string body = hook.kind == DecisionHook::Kind::opa ? json{{"input", call}}.dump() : call.dump();
    std::thread([hook, body = std::move(body), out = std::move(theirs)] {
        HookVerdict verdict;
        try {
            verdict = post(hook, body);
        } catch (const std::exception& e) {
            verdict = {false, std::string(hook.name()) + ": " + e.what()};
        }
        std::string message = (verdict.allowed ? "1" : "0") + verdict.reason;
        send(out.get(), message.data(), message.size(), MSG_NOSIGNAL); // the call may be gone: nothing to tell
    }).detach();
    return ours;
}

HookVerdict read_hook_verdict(int fd)
{
    std::string message(4096, '\0');
    ssize_t n = recv(fd, message.data(), message.size(), MSG_DONTWAIT);
    if (n <= 0)
        return {false, "the decision hook said nothing"};
    message.resize(static_cast<size_t>(n));
    return {message[0] == '1', message.substr(1)};
}

} // namespace cerberus::broker
