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

std::string profile_path(const std::string& name, const std::string& dir, const std::string& key)
{
    if (name.empty() || name.find('/') != std::string::npos || name.find("..") != std::string::npos)
        throw Error("annotation " + key + ": bad profile name \"" + name +
                        "\" (a plain name, without \"/\" or \"..\")",
                    EINVAL);
    return dir + "/" + name + ".json";
}

// The pair of annotations that give this container its policy: the pod's own for this container
// ("io.cerberus.policy/<name>", "io.cerberus.policy.profile/<name>") when the engine names the container and
// either is there, else the ones every container of the pod reads. A pod's annotations reach each of its
// containers, and its author can set no annotation on one container alone.
std::pair<std::string, std::string> policy_annotations(const std::map<std::string, std::string>& annotations)
{
    for (const char* name_key : {"io.kubernetes.cri.container-name", "io.kubernetes.container.name"}) {
        auto name = annotations.find(name_key);
        if (name == annotations.end() || name->second.empty())
            continue;
        std::string own_inline = std::string(inline_annotation) + "/" + name->second;
        std::string own_profile = std::string(profile_annotation) + "/" + name->second;
        if (annotations.count(own_inline) || annotations.count(own_profile))
            return {own_inline, own_profile};
    }
    return {inline_annotation, profile_annotation};
}

} // namespace

std::optional<Policy> resolve_policy(const std::map<std::string, std::string>& annotations,
                                     const PolicySources& sources)
{
    auto [inline_key, profile_key] = policy_annotations(annotations);
    auto inline_policy = annotations.find(inline_key);
    auto profile = annotations.find(profile_key);
    if (inline_policy != annotations.end() && profile != annotations.end())
        throw Error("annotations " + inline_key + " and " + profile_key + " are mutually exclusive", EINVAL);

    std::optional<Policy> from_annotation;
    if (inline_policy != annotations.end()) {
        from_annotation = with_context("annotation " + inline_key, [&] { return parse_policy(inline_policy->second); });
    } else if (profile != annotations.end()) {
        auto path = profile_path(profile->second, sources.policy_dir, profile_key);
        from_annotation = with_context("annotation " + profile_key, [&] { return load_policy_file(path); });
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
