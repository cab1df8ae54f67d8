// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_containment.hpp"

#include "base/error.hpp"
#include "rootfs/paths.hpp"

#include <linux/capability.h>
#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace cerberus::policy {
namespace {

bool has_option(const spec::Mount& mount, const std::string& option)
{
    return std::find(mount.options.begin(), mount.options.end(), option) != mount.options.end();
}

bool is_bind(const spec::Mount& mount)
{
    return mount.type == "bind" || has_option(mount, "bind") || has_option(mount, "rbind");
}

// The source as the host resolves it (symlinks followed); as written when it does not resolve.
std::string resolved(const std::string& path)
{
    char buffer[PATH_MAX];
    return ::realpath(path.c_str(), buffer) ? std::string(buffer) : path;
}

// True when a bind of source (recursive or not) shows one of the host's cgroup hierarchies.
bool shows_host_cgroups(const spec::Mount& mount, const cgroups::Mounts& host)
{
    std::string source = resolved(mount.source);
    bool recursive = has_option(mount, "rbind");
    return std::any_of(host.points.begin(), host.points.end(), [&](const std::string& point) {
        return paths::within(source, point) || (recursive && paths::within(point, source));
    });
}

// The agent can remount what it sees: CAP_SYS_ADMIN is in its bounding set and the policy leaves it.
bool may_remount(const Policy& policy, const spec::Spec& spec)
{
    if (std::find(policy.forbidden_caps.begin(), policy.forbidden_caps.end(), CAP_SYS_ADMIN) !=
        policy.forbidden_caps.end())
        return false;
    if (!spec.process || !spec.process->capabilities)
        return false;
    const auto& bounding = spec.process->capabilities->bounding;
    return std::find(bounding.begin(), bounding.end(), "CAP_SYS_ADMIN") != bounding.end();
}

bool same_file(const std::string& a, const std::string& b)
{
    struct stat first{}, second{};
    return ::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 && first.st_dev == second.st_dev &&
           first.st_ino == second.st_ino;
}

} // namespace

void keep_in_cgroup(const Policy& policy, spec::Spec& spec, const cgroups::Mounts& host)
{
    if (!spec.linux)
        spec.linux.emplace();
    auto& namespaces = spec.linux->namespaces;
    auto cgroup = std::find_if(namespaces.begin(), namespaces.end(), [](const auto& ns) { return ns.type == "cgroup"; });
    if (cgroup == namespaces.end())
        namespaces.push_back({"cgroup", ""});
    else if (!cgroup->path.empty())
        throw Error("linux.namespaces[" + std::to_string(cgroup - namespaces.begin()) + "].path: a policed container " +
                        "needs a cgroup namespace of its own (the policy stays on its cgroup; another's namespace " +
                        "shows it cgroups it could move itself to)",
                    EINVAL);
    // Where a cgroup namespace is no delegation boundary (cgroup2 without nsdelegate) the kernel lets a
    // task inside it pull a process it can name (a shared pid namespace) into its cgroup, under the
    // container's policy and limits, and out of no backend's sight.
    std::optional<size_t> writable = writable_cgroup_mount(spec);
    if (writable && shares_pid_namespace(spec) && !host.ns_delegate)
        throw Error("mounts[" + std::to_string(*writable) + "] (" + spec.mounts[*writable].destination +
                        "): the container shares a pid namespace and may write to its cgroups, and this host's "
                        "cgroup2 is not mounted with nsdelegate: a process outside the container could be pulled "
                        "into its cgroup; mount it read-only",
                    EINVAL);
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
        const spec::Mount& mount = spec.mounts[i];
        if (!is_bind(mount) || !shows_host_cgroups(mount, host))
            continue;
        if (has_option(mount, "ro") && !may_remount(policy, spec))
            continue;
        throw Error("mounts[" + std::to_string(i) + "] (" + mount.destination + "): a bind of the host's cgroup " +
                        "hierarchy " + mount.source + " into a policed container shows it cgroups outside its own, " +
                        "where it could move itself off the policy; mount type \"cgroup\" instead (it shows the " +
                        "container's own), or bind it read-only with CAP_SYS_ADMIN dropped",
                    EINVAL);
    }
}

std::optional<size_t> writable_cgroup_mount(const spec::Spec& spec)
{
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
        const spec::Mount& mount = spec.mounts[i];
        if ((mount.type == "cgroup" || mount.type == "cgroup2") && !has_option(mount, "ro"))
            return i;
    }
    return std::nullopt;
}

bool shares_host_network(const spec::Spec& spec)
{
    const spec::Namespace* network = spec.find_namespace("network");
    if (!network)
        return true;
    return !network->path.empty() && (same_file(network->path, "/proc/self/ns/net") ||
                                      same_file(network->path, "/proc/1/ns/net"));
}

bool shares_pid_namespace(const spec::Spec& spec)
{
    const spec::Namespace* pid = spec.find_namespace("pid");
    return !pid || !pid->path.empty();
}

} // namespace cerberus::policy
