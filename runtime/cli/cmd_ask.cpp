// SPDX-License-Identifier: Apache-2.0
// ask: the calls policies' commands and the host names their ask_hosts ask
// about (audit/asks.hpp). `list` the pending ones, `allow` one (--once, the
// default; --for DURATION or --always grant that exact call or name to its
// container), `deny` one; `grants` lists the grants (of one container),
// `revoke` takes one back.
#include "audit/audit_format.hpp"
#include "audit/asks.hpp"
#include "container/ask_client.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "usage_error.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace cerberus::cli {
namespace {

constexpr const char* usage = "cerberus ask list [--format text|json]\n"
                              "       cerberus ask allow ID [--once | --for DURATION | --always]\n"
                              "       cerberus ask deny ID\n"
                              "       cerberus ask grants [CONTAINER] [--format text|json]\n"
                              "       cerberus ask revoke GRANT-ID";

bool json_format(const ParsedOptions& opts)
{
    std::string format = opts.get("format", "text");
    if (format != "text" && format != "json")
        throw UsageError("--format: expected json or text, got \"" + format + "\"");
    return format == "json";
}

// "57s" left until a wall-clock deadline.
std::string left_until(int64_t deadline_ns)
{
    int64_t left = (deadline_ns - audit::wall_now_ns()) / 1'000'000'000;
    return std::to_string(left > 0 ? left : 0) + "s";
}

int list(const ParsedOptions& opts)
{
    expect_positional(opts, 1, 1, usage);
    auto asks = audit::read_pending_asks();
    if (json_format(opts)) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& ask : asks) {
            auto j = audit::to_json(ask);
            j["asked"] = audit::rfc3339_ns(ask.asked_ns);
            j["deadline"] = audit::rfc3339_ns(ask.deadline_ns);
            out.push_back(std::move(j));
        }
        std::printf("%s\n", out.dump(2).c_str());
        return 0;
    }
    std::printf("%-9s %-24s %-8s %-5s %-16s %s\n", "ASK", "CONTAINER", "PID", "LEFT", "CWD", "ASKED");
    for (const auto& ask : asks)
        std::printf("%-9s %-24s %-8d %-5s %-16s %s\n", ask.id.c_str(), ask.container.c_str(), ask.pid,
                    left_until(ask.deadline_ns).c_str(), ask.subject.is_host() ? "-" : ask.cwd.c_str(), audit::subject_text(ask.subject).c_str());
    return 0;
}

int grants(const ParsedOptions& opts)
{
    expect_positional(opts, 1, 2, usage);
    std::string container = opts.positional.size() > 1 ? opts.positional[1] : "";
    std::vector<audit::Grant> kept;
    for (auto& grant : audit::read_grants(audit::grants_path()))
        if (container.empty() || grant.container == container)
            kept.push_back(std::move(grant));
    if (json_format(opts)) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& grant : kept)
            out.push_back(audit::to_json(grant));
        std::printf("%s\n", out.dump(2).c_str());
        return 0;
    }
    std::printf("%-11s %-24s %-6s %-10s %s\n", "GRANT", "CONTAINER", "BY", "LEFT", "GRANTED");
    for (const auto& grant : kept)
        std::printf("%-11s %-24s %-6u %-10s %s\n", grant.id.c_str(), grant.container.c_str(), grant.granted_by,
                    grant.expires_ns ? left_until(*grant.expires_ns).c_str() : "always",
                    audit::subject_text(grant.subject).c_str());
    return 0;
}

// --once (the default), --for DURATION or --always: one of them.
audit::AskAnswer allowing(const ParsedOptions& opts)
{
    int given = opts.has("once") + opts.has("for") + opts.has("always");
    if (given > 1)
        throw UsageError("ask allow: one of --once, --for DURATION, --always");
    if (opts.has("for"))
        return audit::parse_ask_answer("for " + opts.get("for"));
    return audit::parse_ask_answer(opts.flag("always") ? "always" : "once");
}

} // namespace

int cmd_ask(const RuntimeOptions&, const Args& args)
{
    ParsedOptions opts = parse_options(
        args, {{"format", 0, true}, {"once", 0, false}, {"for", 0, true}, {"always", 0, false}});
    if (opts.help)
        throw HelpRequested(std::string("usage: ") + usage);
    std::string verb = opts.positional.empty() ? "" : opts.positional[0];
    if (verb == "list")
        return list(opts);
    if (verb == "grants")
        return grants(opts);
    if (verb == "allow" || verb == "deny" || verb == "revoke") {
        expect_positional(opts, 2, 2, usage);
        const std::string& id = opts.positional[1];
        std::string done = verb == "revoke" ? container::revoke_grant(id)
                           : verb == "deny" ? container::answer_pending_ask(id, audit::parse_ask_answer("deny"))
                                            : container::answer_pending_ask(id, allowing(opts));
        std::printf("%s\n", done.c_str());
        return 0;
    }
    throw UsageError(std::string("usage: ") + usage);
}

} // namespace cerberus::cli
