// SPDX-License-Identifier: Apache-2.0
// A second, naive account of what a policy allows, written from the rules in
// docs/policy.md with none of policy_access's indexing: the fuzz targets
// compare the two, and check narrowing against this one.
#pragma once

#include "base/error.hpp"
#include "policy/policy.hpp"
#include "rootfs/paths.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace reference {

using namespace cerberus::policy;

struct Access {
    bool read = false, write = false, map_exec = false;
};

inline Access path_access(const Policy& p, const std::string& path)
{
    bool bins = p.allowed_bins.has_value();
    for (const auto& denied : p.denied_paths) {
        if (cerberus::paths::within(path, denied))
            return {};
    }
    if (!p.restricts_paths())
        return {true, true, !bins};
    std::string best;
    bool found = false;
    auto consider = [&](const std::optional<std::vector<std::string>>& list) {
        for (const auto& entry : list.value_or(std::vector<std::string>{})) {
            if (cerberus::paths::within(path, entry) && (!found || entry.size() > best.size())) {
                best = entry;
                found = true;
            }
        }
    };
    consider(p.allowed_paths);
    consider(p.read_only_paths);
    if (!found)
        return {};
    auto listed = [&](const std::optional<std::vector<std::string>>& list) {
        const auto& items = list.value_or(std::vector<std::string>{});
        return std::find(items.begin(), items.end(), best) != items.end();
    };
    bool writable = listed(p.allowed_paths);
    return {true, writable, !bins || !writable};
}

inline bool within(const Access& narrow, const Access& wide)
{
    return (!narrow.read || wide.read) && (!narrow.write || wide.write) && (!narrow.map_exec || wide.map_exec);
}

inline bool host_allowed(const Policy& p, const Cidr& address, unsigned port)
{
    if (!p.allowed_hosts)
        return true;
    return std::any_of(p.allowed_hosts->begin(), p.allowed_hosts->end(), [&](const HostRule& rule) {
        return rule.network && rule.network->contains(address) && rule.ports.first <= port && port <= rule.ports.last;
    });
}

// Whether a query for name (a plain name) would be admitted on port.
inline bool name_allowed(const Policy& p, const std::string& name, unsigned port)
{
    if (!p.allowed_hosts)
        return true;
    return std::any_of(p.allowed_hosts->begin(), p.allowed_hosts->end(), [&](const HostRule& rule) {
        return !rule.network && cerberus::policy::host_name_matches(rule.host_name, name) && rule.ports.first <= port &&
               port <= rule.ports.last;
    });
}

// Names a host-name rule stands for: itself, or some below a wildcard's parent.
inline std::vector<std::string> probe_names(const std::string& pattern)
{
    if (!pattern.starts_with("*."))
        return {pattern};
    std::string parent = pattern.substr(2);
    return {"a." + parent, "a.b." + parent};
}

// Paths where two policies can differ, and a few below them.
inline std::vector<std::string> probe_paths(const std::vector<const Policy*>& policies)
{
    std::vector<std::string> paths = {"/", "/\x01unnamed"};
    auto add = [&](const std::string& path) {
        paths.push_back(path);
        paths.push_back(path == "/" ? "/x" : path + "/x");
    };
    for (const Policy* p : policies) {
        for (const auto* list : {&p->allowed_paths, &p->read_only_paths, &p->allowed_bins}) {
            for (const auto& path : list->value_or(std::vector<std::string>{}))
                add(path);
        }
        for (const auto& path : p->denied_paths)
            add(path);
    }
    return paths;
}

[[noreturn]] inline void fail(const std::string& what)
{
    std::fprintf(stderr, "reference check failed: %s\n", what.c_str());
    std::abort();
}

} // namespace reference
