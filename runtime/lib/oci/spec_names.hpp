// SPDX-License-Identifier: Apache-2.0
// The names config.json gives kernel objects, mapped to the kernel's constants:
// validation checks a name against these tables, the process code applies it.
#pragma once

#include <optional>
#include <span>
#include <string>

namespace cerberus::spec {

struct NamespaceKind {
    const char* type;      // as in config.json: "network"
    const char* proc_name; // its /proc/<pid>/ns entry: "net"
    int flag;              // CLONE_NEWNET
};

// Every namespace type, in the order a process joins them: user first, so the
// others are joined with its privileges; pid and time last, since they only
// affect children.
std::span<const NamespaceKind> namespace_kinds();

// CLONE_NEW* flag of a namespace type ("network" → CLONE_NEWNET); none when unknown.
std::optional<int> namespace_clone_flag(const std::string& type);

// /proc/<pid>/ns/<name> entry name of a namespace type ("network" → "net").
std::string namespace_proc_name(const std::string& type);

// RLIMIT_* of a process.rlimits type ("RLIMIT_NOFILE"); none when unknown.
std::optional<int> rlimit_resource(const std::string& type);

} // namespace cerberus::spec
