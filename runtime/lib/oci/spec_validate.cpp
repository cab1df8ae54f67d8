// SPDX-License-Identifier: Apache-2.0
#include "oci/spec_validate.hpp"

#include "base/error.hpp"
#include "oci/spec_names.hpp"

#include <sys/stat.h>

#include <set>

namespace cerberus::spec {
namespace {

[[noreturn]] void invalid(const std::string& field, const std::string& message)
{
    throw Error(field + ": " + message, EINVAL);
}

bool is_absolute(const std::string& path) { return !path.empty() && path[0] == '/'; }

void validate_process(const Process& p)
{
    if (p.args.empty())
        invalid("process.args", "must name the program to run");
    if (!is_absolute(p.cwd))
        invalid("process.cwd", "must be an absolute path, got \"" + p.cwd + "\"");
    for (size_t i = 0; i < p.env.size(); ++i)
        if (p.env[i].find('=') == std::string::npos)
            invalid("process.env[" + std::to_string(i) + "]", "expected KEY=VALUE, got \"" + p.env[i] + "\"");
    std::set<std::string> seen;
    for (size_t i = 0; i < p.rlimits.size(); ++i) {
        const auto& r = p.rlimits[i];
        std::string field = "process.rlimits[" + std::to_string(i) + "]";
        if (!rlimit_resource(r.type))
            invalid(field + ".type", "unknown rlimit \"" + r.type + "\"");
        if (!seen.insert(r.type).second)
            invalid(field + ".type", "duplicate rlimit \"" + r.type + "\"");
        if (r.soft > r.hard)
            invalid(field, "soft limit " + std::to_string(r.soft) + " exceeds hard limit " + std::to_string(r.hard));
    }
}

void validate_namespaces(const Spec& spec)
{
    const Linux& l = *spec.linux;
    std::set<std::string> seen;
    for (size_t i = 0; i < l.namespaces.size(); ++i) {
        const auto& ns = l.namespaces[i];
        std::string field = "linux.namespaces[" + std::to_string(i) + "]";
        if (!namespace_clone_flag(ns.type))
            invalid(field + ".type", "unknown namespace \"" + ns.type + "\"");
        if (!seen.insert(ns.type).second)
            invalid(field + ".type", "duplicate namespace \"" + ns.type + "\"");
        if (!ns.path.empty()) {
            if (!is_absolute(ns.path))
                invalid(field + ".path", "must be absolute, got \"" + ns.path + "\"");
            struct stat st;
            if (::stat(ns.path.c_str(), &st) != 0)
                throw_errno(field + ".path: " + ns.path);
        }
    }
    const Namespace* user = spec.find_namespace("user");
    bool new_user = user && user->path.empty();
    if (new_user && (l.uid_mappings.empty() || l.gid_mappings.empty()))
        invalid("linux.uidMappings", "a new user namespace needs uidMappings and gidMappings");
    if (!new_user && (!l.uid_mappings.empty() || !l.gid_mappings.empty()))
        invalid("linux.uidMappings", "id mappings need a new user namespace");
    const Namespace* uts = spec.find_namespace("uts");
    if ((!spec.hostname.empty() || !spec.domainname.empty()) && !uts)
        invalid("hostname", "setting the hostname needs a uts namespace");
}

void validate_mounts(const Spec& spec)
{
    for (size_t i = 0; i < spec.mounts.size(); ++i) {
        const auto& m = spec.mounts[i];
        std::string field = "mounts[" + std::to_string(i) + "]";
        if (m.destination.empty())
            invalid(field + ".destination", "is missing");
        if (m.destination.find("..") != std::string::npos)
            invalid(field + ".destination", "must not contain \"..\": \"" + m.destination + "\"");
    }
}

void validate_linux(const Spec& spec)
{
    const Linux& l = *spec.linux;
    validate_namespaces(spec);
    for (size_t i = 0; i < l.devices.size(); ++i) {
        const auto& d = l.devices[i];
        std::string field = "linux.devices[" + std::to_string(i) + "]";
        if (d.type != "c" && d.type != "b" && d.type != "u" && d.type != "p")
            invalid(field + ".type", "unknown device type \"" + d.type + "\"");
        if (!is_absolute(d.path) || d.path.find("..") != std::string::npos)
            invalid(field + ".path", "must be an absolute path inside /dev, got \"" + d.path + "\"");
    }
    static const std::set<std::string> propagations = {"", "private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable"};
    if (!propagations.count(l.rootfs_propagation))
        invalid("linux.rootfsPropagation", "unknown propagation \"" + l.rootfs_propagation + "\"");
    for (const auto& [key, value] : l.sysctl)
        if (key.empty() || key.find("..") != std::string::npos || key.find('/') == 0)
            invalid("linux.sysctl", "bad key \"" + key + "\"");
}

void validate_hooks(const Hooks& hooks)
{
    auto check = [](const std::vector<Hook>& list, const std::string& kind) {
        for (size_t i = 0; i < list.size(); ++i) {
            std::string field = "hooks." + kind + "[" + std::to_string(i) + "]";
            if (!is_absolute(list[i].path))
                invalid(field + ".path", "must be an absolute path, got \"" + list[i].path + "\"");
            if (list[i].timeout && *list[i].timeout <= 0)
                invalid(field + ".timeout", "must be positive");
        }
    };
    for (const auto& kind : hook_kinds)
        check(hooks.*kind.list, kind.name);
}

} // namespace

std::string resolve_rootfs(const Spec& spec, const std::string& bundle_dir)
{
    if (spec.root.path.empty())
        invalid("root.path", "is missing");
    return is_absolute(spec.root.path) ? spec.root.path : bundle_dir + "/" + spec.root.path;
}

void validate(const Spec& spec, const std::string& rootfs_dir)
{
    if (spec.oci_version.empty())
        invalid("ociVersion", "is missing");
    if (spec.oci_version.rfind("1.", 0) != 0)
        invalid("ociVersion", "unsupported version \"" + spec.oci_version + "\"");
    struct stat st;
    if (::stat(rootfs_dir.c_str(), &st) != 0)
        throw_errno("root.path: " + rootfs_dir);
    if (!S_ISDIR(st.st_mode))
        invalid("root.path", rootfs_dir + " is not a directory");
    if (!spec.process)
        invalid("process", "is missing");
    validate_process(*spec.process);
    if (!spec.linux)
        invalid("linux", "is missing");
    validate_linux(spec);
    validate_mounts(spec);
    if (spec.hooks)
        validate_hooks(*spec.hooks);
}

} // namespace cerberus::spec
