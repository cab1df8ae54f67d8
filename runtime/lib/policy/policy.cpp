// SPDX-License-Identifier: Apache-2.0
// Parsing and validation of the policy document.
#include "policy/policy.hpp"

#include "base/error.hpp"
#include "policy/policy_json.hpp"
#include "policy/rule_lists.hpp"
#include "process/capabilities.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>
#include <tuple>

namespace cerberus::policy {

namespace {

using nlohmann::json;

Mode parse_mode(const json& value)
{
    auto text = expect(value, json::value_t::string, "a string", "policy.mode").get<std::string>();
    if (text == "enforce")
        return Mode::enforce;
    if (text == "audit")
        return Mode::audit;
    invalid("policy.mode", "unknown mode " + json_quoted(text) + " (expected \"enforce\" or \"audit\")");
}

// A parser callback that refuses a key seen before in the same object: with
// two "denied_paths", which one counts is an accident of the parser.
json::parser_callback_t refuse_duplicate_keys()
{
    auto open_objects = std::make_shared<std::vector<std::set<std::string>>>();
    return [open_objects](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::object_start) {
            open_objects->emplace_back();
        } else if (event == json::parse_event_t::object_end) {
            open_objects->pop_back();
        } else if (event == json::parse_event_t::key) {
            auto key = parsed.get<std::string>();
            if (!open_objects->back().insert(key).second)
                invalid("policy", "duplicate key " + json_quoted(key));
        }
        return true;
    };
}

} // namespace

std::string normalize_policy_path(const std::string& path, const std::string& field)
{
    if (path.empty() || path[0] != '/')
        invalid(field, "path " + json_quoted(path) + " is not absolute");
    if (path.find('\0') != std::string::npos)
        invalid(field, "path " + json_quoted(path) + " contains a NUL byte");
    std::string normal;
    size_t start = 0;
    while (start < path.size()) {
        size_t end = path.find('/', start);
        if (end == std::string::npos)
            end = path.size();
        std::string component = path.substr(start, end - start);
        if (component == "." || component == "..")
            invalid(field, "path " + json_quoted(path) + " has a \"" + component + "\" component");
        if (!component.empty())
            normal += "/" + component;
        start = end + 1;
    }
    return normal.empty() ? "/" : normal;
}

std::optional<int> capability_number(const std::string& name)
{
    std::string upper = name;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    auto number = capabilities::capability_number(upper);
    return number ? std::optional<int>(*number) : std::nullopt;
}

void require_policy_applied(const Policy& policy, const spec::Spec& spec)
{
    if (!spec.process)
        return;
    const launch::ProcessConstraints forced = forced_on_processes(policy);
    if (forced.no_new_privileges && !spec.process->no_new_privileges)
        throw Error("process.noNewPrivileges: false, and a policy needs it true", EPERM);
    if (!spec.process->capabilities)
        return;
    const auto& given = *spec.process->capabilities;
    const std::pair<const char*, const std::vector<std::string>&> sets[] = {
        {"bounding", given.bounding},       {"effective", given.effective}, {"inheritable", given.inheritable},
        {"permitted", given.permitted},     {"ambient", given.ambient}};
    for (const auto& [set_name, names] : sets) {
        for (const auto& name : names) {
            std::optional<int> cap = capability_number(name);
            if (cap && *cap < 64 && (forced.forbidden_capabilities >> *cap & 1))
                throw Error(std::string("process.capabilities.") + set_name + ": " + name +
                                " is in policy.forbidden_caps",
                            EPERM);
        }
    }
}

Policy parse_policy(const std::string& text)
{
    json document;
    try {
        document = json::parse(text, refuse_duplicate_keys());
    } catch (const json::exception& e) { // parse errors, and numbers too large to hold
        invalid("policy", std::string("invalid JSON: ") + e.what());
    }
    expect(document, json::value_t::object, "an object", "policy");

    Policy policy;
    for (const auto& [key, value] : document.items()) {
        std::string field = "policy." + key;
        if (const RuleList* list = find_rule_list(key)) {
            list->parse(value, field, policy);
        } else if (key == "mode") {
            policy.mode = parse_mode(value);
        } else if (key == "enforcement") {
            auto name = expect(value, json::value_t::string, "a string", field).get<std::string>();
            auto enforcement = parse_enforcement(name);
            if (!enforcement)
                invalid(field, "unknown backend " + json_quoted(name) +
                                   " (expected \"auto\", \"landlock\", \"fmod-ret\" or \"bpf-lsm\")");
            policy.enforcement = *enforcement;
        } else if (key == learned_section) {
            expect(value, json::value_t::object, "an object", field); // a comment: read by people, not enforced
        } else {
            invalid("policy", "unknown field " + json_quoted(key));
        }
    }
    for (const auto& list : rule_lists())
        if (list.check_within)
            list.check_within(policy);
    return policy;
}

bool is_dynamic_loader(const std::string& path)
{
    std::string name = path.substr(path.rfind('/') + 1);
    return (name.rfind("ld-", 0) == 0 || name.rfind("ld64", 0) == 0) && name.find(".so") != std::string::npos;
}

launch::ProcessConstraints forced_on_processes(const Policy& policy)
{
    launch::ProcessConstraints forced{.no_new_privileges = true};
    for (int cap : policy.forbidden_caps)
        forced.forbidden_capabilities |= uint64_t{1} << cap;
    return forced;
}

const char* enforcement_name(Enforcement enforcement)
{
    switch (enforcement) {
    case Enforcement::automatic: return "auto";
    case Enforcement::landlock: return "landlock";
    case Enforcement::fmod_ret: return "fmod-ret";
    case Enforcement::bpf_lsm: return "bpf-lsm";
    }
    return "auto";
}

std::optional<Enforcement> parse_enforcement(const std::string& name)
{
    for (auto e : {Enforcement::automatic, Enforcement::landlock, Enforcement::fmod_ret, Enforcement::bpf_lsm})
        if (name == enforcement_name(e))
            return e;
    return std::nullopt;
}

} // namespace cerberus::policy
