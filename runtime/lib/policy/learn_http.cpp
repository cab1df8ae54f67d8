// SPDX-License-Identifier: Apache-2.0
// allowed_http in learn mode: a request the egress proxy let through in audit
// mode (or refused by the rules) is learned as the entry of exactly it,
// "METHOD https://host[:port]/path", with "parent/*" in place of fold_at or
// more paths directly under one parent requested with one method of one host
// (never "/*", the whole host). A path no entry can spell (percent-encoded,
// or holding a `*`, which an entry reads as a glob) stays denied.
#include "base/error.hpp"
#include "policy/learn_lists.hpp"
#include "policy/policy_http.hpp"

#include <algorithm>

namespace cerberus::policy {
namespace {

const std::string unspellable_request_rule =
    "a path no allowed_http entry spells (percent-encoded, spaces, or a \"*\")";

bool spellable(const std::string& target, const HttpRequest& request)
{
    if (request.path.find('*') != std::string::npos)
        return false;
    try {
        parse_http_rule(target, "allowed_http");
        return true;
    } catch (const Error&) {
        return false;
    }
}

bool take_request(const Action& action, const std::string& rule, Learning& learning)
{
    if (action.op != "http")
        return false;
    auto request = parse_http_request(action.target);
    if (!request || !spellable(action.target, *request)) {
        learning.keep_denied(action.op, action.target, request ? unspellable_request_rule : rule);
        return true;
    }
    learning.requests[request->method + " " + request->origin].insert(request->path);
    learning.must_allow(action, learn_allowed_http);
    return true;
}

// "/repos/acme" for "/repos/acme/x"; "" for a path directly under "/".
std::string parent_of(const std::string& path)
{
    return path.substr(0, path.rfind('/'));
}

// The globs of the paths requested under one method and origin (prefix): "parent/*" for a parent with fold_at
// or more of them directly under it (the widest, where one such parent is under another), then each path no
// glob matches.
std::vector<std::string> path_globs(const std::set<std::string>& paths, const std::string& prefix,
                                    nlohmann::ordered_json& folded)
{
    std::map<std::string, size_t> children; // by parent
    for (const auto& path : paths)
        ++children[parent_of(path)];
    std::vector<std::string> parents; // in order, so an ancestor comes before those under it
    for (const auto& [parent, count] : children)
        if (!parent.empty() && count >= fold_at)
            parents.push_back(parent);
    std::vector<std::string> globs;
    for (const auto& path : paths) {
        auto widest = std::find_if(parents.begin(), parents.end(),
                                   [&](const std::string& parent) { return path.starts_with(parent + "/"); });
        if (widest == parents.end()) {
            globs.push_back(path);
            continue;
        }
        std::string glob = *widest + "/*";
        if (!folded.contains(prefix + glob))
            globs.push_back(glob);
        folded[prefix + glob].push_back(prefix + path);
    }
    return globs;
}

void add_requests(Learning& learning)
{
    Policy& policy = learning.learned.policy;
    for (const auto& [prefix, paths] : learning.requests) {
        for (const auto& glob : path_globs(paths, prefix, learning.learned.folded)) {
            std::string entry = prefix + glob;
            bool present = std::any_of(policy.allowed_http.begin(), policy.allowed_http.end(),
                                       [&](const HttpRule& rule) { return rule.text == entry; });
            if (present)
                continue;
            policy.allowed_http.push_back(parse_http_rule(entry, "allowed_http"));
            learning.learned.added["allowed_http"].push_back(entry);
        }
    }
}

} // namespace

// Its entries allow the requests recorded, or a glob over them: nothing to settle.
const LearnExtraction learn_allowed_http = {
    .record = nullptr, .take = take_request, .add = add_requests, .settle = nullptr};

} // namespace cerberus::policy
