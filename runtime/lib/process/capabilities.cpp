// SPDX-License-Identifier: Apache-2.0
#include "process/capabilities.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <cap-ng.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <array>
#include <string>

namespace cerberus::capabilities {

namespace {

// libcap-ng's names ("chown"), spelled as config.json does ("CAP_CHOWN"),
// indexed by capability number; empty where libcap-ng has no name.
const std::array<std::string, 64>& names()
{
    static const std::array<std::string, 64> table = [] {
        std::array<std::string, 64> spelled;
        for (unsigned cap = 0; cap < spelled.size(); ++cap) {
            const char* name = capng_capability_to_name(cap);
            // For a number it does not know, libcap-ng answers with the number itself.
            if (!name || std::isdigit(static_cast<unsigned char>(name[0])))
                continue;
            spelled[cap] = "CAP_" + std::string(name);
            std::transform(spelled[cap].begin(), spelled[cap].end(), spelled[cap].begin(),
                           [](unsigned char c) { return std::toupper(c); });
        }
        return spelled;
    }();
    return table;
}

constexpr uint64_t bit(unsigned cap) { return uint64_t{1} << cap; }

std::string names_of(uint64_t mask)
{
    std::string names;
    for (unsigned cap = 0; cap < 64; ++cap)
        if (mask & bit(cap))
            names += (names.empty() ? "" : ", ") + describe(cap);
    return names;
}

uint64_t parse_set(const std::vector<std::string>& names, const std::string& set, unsigned last_cap)
{
    uint64_t mask = 0;
    for (const auto& name : names) {
        std::optional<unsigned> cap = capability_number(name);
        if (!cap)
            throw Error("process.capabilities." + set + ": unknown capability \"" + name + "\"", EINVAL);
        if (*cap > last_cap) {
            spdlog::debug("process.capabilities.{}: {} is not supported by this kernel, ignored", set, name);
            continue;
        }
        mask |= bit(*cap);
    }
    return mask;
}

} // namespace

std::string_view capability_name(unsigned cap)
{
    return cap < names().size() ? std::string_view(names()[cap]) : std::string_view{};
}

std::optional<unsigned> capability_number(std::string_view name)
{
    if (name.empty())
        return std::nullopt;
    auto found = std::find(names().begin(), names().end(), name);
    return found == names().end() ? std::nullopt : std::optional<unsigned>(found - names().begin());
}

std::string describe(unsigned cap)
{
    std::string_view name = capability_name(cap);
    return name.empty() ? "capability " + std::to_string(cap) : std::string(name);
}

unsigned kernel_last_cap()
{
    return static_cast<unsigned>(std::stoul(files::read_file("/proc/sys/kernel/cap_last_cap")));
}

CapabilitySets parse_capabilities(const spec::Capabilities& config)
{
    return parse_capabilities(config, kernel_last_cap());
}

CapabilitySets parse_capabilities(const spec::Capabilities& config, unsigned last_cap)
{
    CapabilitySets sets;
    sets.last_cap = std::min<unsigned>(last_cap, 63);
    sets.bounding = parse_set(config.bounding, "bounding", sets.last_cap);
    sets.effective = parse_set(config.effective, "effective", sets.last_cap);
    sets.inheritable = parse_set(config.inheritable, "inheritable", sets.last_cap);
    sets.permitted = parse_set(config.permitted, "permitted", sets.last_cap);
    sets.ambient = parse_set(config.ambient, "ambient", sets.last_cap);

    if (uint64_t extra = sets.effective & ~sets.permitted)
        throw Error("process.capabilities.effective: not in the permitted set: " + names_of(extra), EINVAL);
    // The kernel raises an ambient capability only if it is permitted and
    // inheritable; runc skips the others instead of failing, and so do we.
    if (uint64_t unraisable = sets.ambient & ~(sets.permitted & sets.inheritable)) {
        spdlog::debug("process.capabilities.ambient: ignoring capabilities that are not both permitted and "
                     "inheritable: {}",
                     names_of(unraisable));
        sets.ambient &= ~unraisable;
    }
    return sets;
}

void drop_bounding_set(const CapabilitySets& sets)
{
    for (unsigned cap = 0; cap <= sets.last_cap; ++cap) {
        if (sets.bounding & bit(cap))
            continue;
        // Already dropped ones are skipped, so a process without CAP_SETPCAP
        // can still apply a set it already has.
        if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 0)
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
            throw_errno("dropping " + describe(cap) + " from the bounding set");
    }
}

void apply_capabilities(const CapabilitySets& sets)
{
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    for (unsigned i = 0; i < _LINUX_CAPABILITY_U32S_3; ++i) {
        data[i].effective = static_cast<uint32_t>(sets.effective >> (32 * i));
        data[i].permitted = static_cast<uint32_t>(sets.permitted >> (32 * i));
        data[i].inheritable = static_cast<uint32_t>(sets.inheritable >> (32 * i));
    }
    check(syscall(SYS_capset, &header, data), "capset");

    check(prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "clearing the ambient capabilities");
    for (unsigned cap = 0; cap <= sets.last_cap; ++cap)
        if ((sets.ambient & bit(cap)) && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
            throw_errno("raising ambient capability " + describe(cap));
}

} // namespace cerberus::capabilities
