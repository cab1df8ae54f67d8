// SPDX-License-Identifier: Apache-2.0
// Where a container's policy comes from.
#include "policy/policy.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

namespace cerberus::policy {

namespace {

Policy load_policy_file(const std::string& path)
{
    return with_context("policy file " + path, [&] { return parse_policy(files::read_file(path)); });
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
        return default_policy;
    if (sources.lock && default_policy)
        return with_context("--lock-policy", [&] { return narrow_policy(*default_policy, *from_annotation); });
    return from_annotation;
}

} // namespace cerberus::policy
