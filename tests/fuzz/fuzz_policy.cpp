// SPDX-License-Identifier: Apache-2.0
// The policy document: parsing, host names kept as names, compilation to map
// entries. A document is either compiled or refused with a cerberus::Error;
// what parse_policy accepts never has an allowed_bins entry its own rules make
// writable, and policy_access agrees with the naive reference.
#include "base/error.hpp"
#include "policy/policy.hpp"
#include "policy/policy_access.hpp"
#include "policy/policy_compile.hpp"
#include "reference_access.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>

using namespace cerberus::policy;

namespace {

void check_access(const Policy& p)
{
    for (const auto& point : path_points({&p})) {
        if (point.path.empty())
            continue;
        auto want = reference::path_access(p, point.path);
        const auto& got = point.access[0];
        if (want.read != got.read || want.write != got.write || want.map_exec != got.map_exec)
            reference::fail("path_points and the reference disagree at \"" + point.path + "\"");
    }
    if (p.restricts_paths()) {
        for (const auto& bin : p.allowed_bins.value_or(std::vector<std::string>{})) {
            if (reference::path_access(p, bin).write)
                reference::fail("accepted a writable allowed_bins entry \"" + bin + "\"");
        }
    }
}

void check_compiled(const Policy& p, const CompiledPolicy& c)
{
    // Names resolve through the DNS gate: those of allowed_hosts and ask_hosts, and allowed_http's (proxied).
    bool names = (p.allowed_hosts && std::any_of(p.allowed_hosts->begin(), p.allowed_hosts->end(),
                                                 [](const HostRule& rule) { return !rule.network; })) ||
                 (p.ask_hosts && !p.ask_hosts->names.empty()) || !p.allowed_http.empty();
    if (names != ((c.policy.flags & CERB_HAS_NAMES) != 0))
        reference::fail("CERB_HAS_NAMES does not say whether the policy names hosts");
    std::set<std::string> paths;
    for (const auto* list : {&p.allowed_paths, &p.read_only_paths, &p.allowed_bins}) {
        for (const auto& path : list->value_or(std::vector<std::string>{}))
            paths.insert(path);
    }
    paths.insert(p.denied_paths.begin(), p.denied_paths.end());
    // The directories above each rule's path get an entry too (their names may not change).
    std::set<std::string> with_ancestors = paths;
    for (const auto& path : paths)
        for (size_t slash = path.rfind('/'); slash != std::string::npos && slash > 0; slash = path.rfind('/', slash - 1))
            with_ancestors.insert(path.substr(0, slash));
    if (c.paths.size() > with_ancestors.size())
        reference::fail("more path entries than distinct paths and the directories above them");
    for (const auto& entry : c.net4) {
        if (entry.key.prefixlen > 64 + 32 || entry.value.nranges > CERB_MAX_PORT_RANGES)
            reference::fail("bad IPv4 entry");
    }
    for (const auto& entry : c.net6) {
        if (entry.key.prefixlen > 64 + 128 || entry.value.nranges > CERB_MAX_PORT_RANGES)
            reference::fail("bad IPv6 entry");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string text(reinterpret_cast<const char*>(data), size);
    try {
        Policy p = parse_policy(text);
        check_access(p);
        check_compiled(p, compile_policy(p, 0x100000007ULL, 0x1234));
        cerberus::launch::ProcessConstraints forced = forced_on_processes(p);
        if (!forced.no_new_privileges)
            reference::fail("noNewPrivileges not forced");
        for (int cap : p.forbidden_caps)
            if (cap < 0 || cap >= 64 || !(forced.forbidden_capabilities & (uint64_t{1} << cap)))
                reference::fail("forbidden capability " + std::to_string(cap) + " not dropped");
    } catch (const cerberus::Error&) {
    }
    return 0;
}
