// Where a container's policy comes from, and --lock-policy narrowing.
#include "policy/policy.hpp"

#include "base/error.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace cerberus::policy {

namespace {

[[noreturn]] void widens(const std::string& field, const std::string& what)
{
    throw Error(field + ": " + what + " widens the locked default policy", EPERM);
}

std::string entry(const std::string& field, size_t i)
{
    return field + "[" + std::to_string(i) + "]";
}

bool host_covered(const HostRule& rule, const std::vector<HostRule>& allowed)
{
    return std::any_of(allowed.begin(), allowed.end(), [&](const HostRule& base) {
        return base.network->contains(*rule.network) && base.ports.first <= rule.ports.first &&
               rule.ports.last <= base.ports.last;
    });
}

bool path_covered(const std::string& path, const std::vector<std::string>& prefixes)
{
    return std::any_of(prefixes.begin(), prefixes.end(),
                       [&](const std::string& prefix) { return path_within(path, prefix); });
}

std::vector<std::string> united(std::vector<std::string> a, const std::vector<std::string>& b)
{
    for (const auto& item : b) {
        if (std::find(a.begin(), a.end(), item) == a.end())
            a.push_back(item);
    }
    return a;
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        throw_errno("opening " + path);
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad())
        throw_errno("reading " + path);
    return text.str();
}

Policy load_policy_file(const std::string& path)
{
    return with_context("policy file " + path, [&] { return parse_policy(read_file(path)); });
}

std::string profile_path(const std::string& name, const std::string& dir)
{
    if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos)
        throw Error(std::string("annotation ") + profile_annotation + ": bad profile name \"" + name +
                        "\" (a plain name, without \"/\" or \"..\")",
                    EINVAL);
    return dir + "/" + name + ".json";
}

} // namespace

Policy narrow_policy(const Policy& base, const Policy& annotation)
{
    Policy narrowed = annotation;
    if (base.mode == Mode::enforce && annotation.mode == Mode::audit)
        widens("policy.mode", "\"audit\"");

    if (base.allowed_hosts && !annotation.allowed_hosts) {
        narrowed.allowed_hosts = base.allowed_hosts;
    } else if (base.allowed_hosts) {
        for (size_t i = 0; i < annotation.allowed_hosts->size(); ++i) {
            const auto& rule = (*annotation.allowed_hosts)[i];
            if (!host_covered(rule, *base.allowed_hosts))
                widens(entry("policy.allowed_hosts", i), "\"" + rule.text + "\"");
        }
    }

    if (base.restricts_paths() && !annotation.restricts_paths()) {
        narrowed.allowed_paths = base.allowed_paths;
        narrowed.read_only_paths = base.read_only_paths;
    } else if (base.restricts_paths()) {
        auto writable = base.allowed_paths.value_or(std::vector<std::string>{});
        auto readable = united(writable, base.read_only_paths.value_or(std::vector<std::string>{}));
        for (size_t i = 0; annotation.allowed_paths && i < annotation.allowed_paths->size(); ++i) {
            if (!path_covered((*annotation.allowed_paths)[i], writable))
                widens(entry("policy.allowed_paths", i), "\"" + (*annotation.allowed_paths)[i] + "\"");
        }
        for (size_t i = 0; annotation.read_only_paths && i < annotation.read_only_paths->size(); ++i) {
            if (!path_covered((*annotation.read_only_paths)[i], readable))
                widens(entry("policy.read_only_paths", i), "\"" + (*annotation.read_only_paths)[i] + "\"");
        }
    }

    if (base.allowed_bins && !annotation.allowed_bins) {
        narrowed.allowed_bins = base.allowed_bins;
    } else if (base.allowed_bins) {
        for (size_t i = 0; i < annotation.allowed_bins->size(); ++i) {
            const auto& bin = (*annotation.allowed_bins)[i];
            if (std::find(base.allowed_bins->begin(), base.allowed_bins->end(), bin) == base.allowed_bins->end())
                widens(entry("policy.allowed_bins", i), "\"" + bin + "\"");
        }
    }

    narrowed.denied_paths = united(annotation.denied_paths, base.denied_paths);
    std::vector<int> caps = annotation.forbidden_caps;
    caps.insert(caps.end(), base.forbidden_caps.begin(), base.forbidden_caps.end());
    std::sort(caps.begin(), caps.end());
    caps.erase(std::unique(caps.begin(), caps.end()), caps.end());
    narrowed.forbidden_caps = std::move(caps);
    return narrowed;
}

std::optional<Policy> resolve_policy(const std::map<std::string, std::string>& annotations,
                                     const PolicySources& sources)
{
    auto inline_policy = annotations.find(inline_annotation);
    auto profile = annotations.find(profile_annotation);
    if (inline_policy != annotations.end() && profile != annotations.end())
        throw Error(std::string("annotations ") + inline_annotation + " and " + profile_annotation +
                        " are mutually exclusive",
                    EINVAL);

    std::optional<Policy> from_annotation;
    if (inline_policy != annotations.end()) {
        from_annotation = with_context(std::string("annotation ") + inline_annotation,
                                       [&] { return parse_policy(inline_policy->second); });
    } else if (profile != annotations.end()) {
        auto path = profile_path(profile->second, sources.policy_dir);
        from_annotation = with_context(std::string("annotation ") + profile_annotation,
                                       [&] { return load_policy_file(path); });
    }

    std::optional<Policy> default_policy;
    if (!sources.default_policy_file.empty())
        default_policy = with_context("--default-policy", [&] { return load_policy_file(sources.default_policy_file); });

    if (!from_annotation && !default_policy)
        return std::nullopt;
    if (!from_annotation)
        return resolve_host_names(std::move(*default_policy), sources.resolve);
    Policy chosen = resolve_host_names(std::move(*from_annotation), sources.resolve);
    if (sources.lock && default_policy)
        return with_context("--lock-policy", [&] {
            return narrow_policy(resolve_host_names(std::move(*default_policy), sources.resolve), chosen);
        });
    return chosen;
}

} // namespace cerberus::policy
