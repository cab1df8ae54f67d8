// SPDX-License-Identifier: Apache-2.0
// Parsing and validation of the policy document.
#include "policy/policy.hpp"

#include "base/error.hpp"
#include "policy/policy_access.hpp"
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

[[noreturn]] void invalid(const std::string& field, const std::string& what)
{
    throw Error(field + ": " + what, EINVAL);
}

std::string json_quoted(const std::string& value)
{
    return json(value).dump();
}

const json& expect(const json& value, json::value_t type, const char* type_name, const std::string& field)
{
    if (value.type() != type)
        invalid(field, std::string("expected ") + type_name + ", got " + value.type_name() + " " + value.dump());
    return value;
}

std::vector<std::string> string_list(const json& value, const std::string& field)
{
    std::vector<std::string> items;
    for (size_t i = 0; i < expect(value, json::value_t::array, "an array", field).size(); ++i)
        items.push_back(expect(value[i], json::value_t::string, "a string", field + "[" + std::to_string(i) + "]")
                            .get<std::string>());
    return items;
}

std::vector<std::string> path_list(const json& value, const std::string& field)
{
    std::vector<std::string> paths;
    auto items = string_list(value, field);
    for (size_t i = 0; i < items.size(); ++i)
        paths.push_back(normalize_policy_path(items[i], field + "[" + std::to_string(i) + "]"));
    return paths;
}

Mode parse_mode(const json& value)
{
    auto text = expect(value, json::value_t::string, "a string", "policy.mode").get<std::string>();
    if (text == "enforce")
        return Mode::enforce;
    if (text == "audit")
        return Mode::audit;
    invalid("policy.mode", "unknown mode " + json_quoted(text) + " (expected \"enforce\" or \"audit\")");
}

std::vector<int> parse_caps(const json& value)
{
    std::set<int> caps;
    auto names = string_list(value, "policy.forbidden_caps");
    for (size_t i = 0; i < names.size(); ++i) {
        auto number = capability_number(names[i]);
        if (!number)
            invalid("policy.forbidden_caps[" + std::to_string(i) + "]", "unknown capability " + json_quoted(names[i]));
        caps.insert(*number);
    }
    return {caps.begin(), caps.end()};
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
        if (key == "mode") {
            policy.mode = parse_mode(value);
        } else if (key == "allowed_hosts") {
            std::vector<HostRule> rules;
            auto items = string_list(value, field);
            for (size_t i = 0; i < items.size(); ++i)
                rules.push_back(parse_host_rule(items[i], field + "[" + std::to_string(i) + "]"));
            policy.allowed_hosts = std::move(rules);
        } else if (key == "allowed_paths") {
            policy.allowed_paths = path_list(value, field);
        } else if (key == "read_only_paths") {
            policy.read_only_paths = path_list(value, field);
        } else if (key == "denied_paths") {
            policy.denied_paths = path_list(value, field);
        } else if (key == "allowed_bins") {
            policy.allowed_bins = path_list(value, field);
            for (size_t i = 0; i < policy.allowed_bins->size(); ++i) {
                const std::string& bin = (*policy.allowed_bins)[i];
                std::string entry = field + "[" + std::to_string(i) + "]";
                if (bin == "/")
                    invalid(entry, "\"/\" is not a file");
                // Run directly, the loader maps and runs any file it is given.
                if (is_dynamic_loader(bin))
                    invalid(entry, json_quoted(bin) + " is the dynamic loader, which would run any file; "
                                   "dynamically linked programs run without listing it");
            }
        } else if (key == "forbidden_caps") {
            policy.forbidden_caps = parse_caps(value);
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
    check_bins_read_only(policy);
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
