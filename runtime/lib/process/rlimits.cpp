#include "process/rlimits.hpp"

#include "base/error.hpp"

#include <sys/resource.h>

namespace cerberus::rlimits {

std::optional<int> resource_of(const std::string& name)
{
    static const std::pair<const char*, int> table[] = {
        {"RLIMIT_AS", RLIMIT_AS},           {"RLIMIT_CORE", RLIMIT_CORE},         {"RLIMIT_CPU", RLIMIT_CPU},
        {"RLIMIT_DATA", RLIMIT_DATA},       {"RLIMIT_FSIZE", RLIMIT_FSIZE},       {"RLIMIT_LOCKS", RLIMIT_LOCKS},
        {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK}, {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}, {"RLIMIT_NICE", RLIMIT_NICE},
        {"RLIMIT_NOFILE", RLIMIT_NOFILE},   {"RLIMIT_NPROC", RLIMIT_NPROC},       {"RLIMIT_RSS", RLIMIT_RSS},
        {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},   {"RLIMIT_RTTIME", RLIMIT_RTTIME},     {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
        {"RLIMIT_STACK", RLIMIT_STACK},
    };
    for (const auto& [n, r] : table)
        if (name == n)
            return r;
    return std::nullopt;
}

void apply(const std::vector<spec::Rlimit>& limits)
{
    for (const auto& l : limits) {
        struct rlimit value = {l.soft, l.hard};
        if (::setrlimit(*resource_of(l.type), &value) != 0)
            throw_errno("setrlimit " + l.type);
    }
}

} // namespace cerberus::rlimits
