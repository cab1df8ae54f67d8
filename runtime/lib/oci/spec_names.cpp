// SPDX-License-Identifier: Apache-2.0
#include "oci/spec_names.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <utility>

namespace cerberus::spec {
namespace {

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

constexpr NamespaceKind kinds[] = {
    {"user", "user", CLONE_NEWUSER},   {"mount", "mnt", CLONE_NEWNS},   {"network", "net", CLONE_NEWNET},
    {"ipc", "ipc", CLONE_NEWIPC},      {"uts", "uts", CLONE_NEWUTS},    {"cgroup", "cgroup", CLONE_NEWCGROUP},
    {"pid", "pid", CLONE_NEWPID},      {"time", "time", CLONE_NEWTIME},
};

const NamespaceKind* find_namespace_kind(const std::string& type)
{
    for (const auto& k : kinds)
        if (type == k.type)
            return &k;
    return nullptr;
}

} // namespace

std::span<const NamespaceKind> namespace_kinds()
{
    return kinds;
}

std::optional<int> namespace_clone_flag(const std::string& type)
{
    const NamespaceKind* k = find_namespace_kind(type);
    return k ? std::optional<int>(k->flag) : std::nullopt;
}

std::string namespace_proc_name(const std::string& type)
{
    const NamespaceKind* k = find_namespace_kind(type);
    return k ? k->proc_name : type;
}

std::optional<int> rlimit_resource(const std::string& type)
{
    static const std::pair<const char*, int> table[] = {
        {"RLIMIT_AS", RLIMIT_AS},           {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_CPU", RLIMIT_CPU},
        {"RLIMIT_DATA", RLIMIT_DATA},       {"RLIMIT_FSIZE", RLIMIT_FSIZE},       {"RLIMIT_LOCKS", RLIMIT_LOCKS},
        {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK}, {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
        {"RLIMIT_NOFILE", RLIMIT_NOFILE},   {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_RSS", RLIMIT_RSS},
        {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},   {"RLIMIT_RTTIME", RLIMIT_RTTIME},     {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
        {"RLIMIT_STACK", RLIMIT_STACK},
    };
    for (const auto& [name, resource] : table)
        if (type == name)
            return resource;
    return std::nullopt;
}

} // namespace cerberus::spec
