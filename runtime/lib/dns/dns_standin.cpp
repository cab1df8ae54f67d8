// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_standin.hpp"

namespace cerberus::policy {

// Exact, or a leading "*." matching one label or more, never the parent;
// both sides already lower case without a trailing dot.
bool host_name_matches(const std::string& pattern, const std::string& name)
{
    if (pattern.rfind("*.", 0) != 0)
        return pattern == name;
    std::string suffix = pattern.substr(1);
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace cerberus::policy

namespace cerberus::policy {

bool has_host_names(const Policy& policy)
{
    for (const auto& rule : policy.allowed_hosts.value_or(std::vector<HostRule>{}))
        if (!rule.host_name.empty())
            return true;
    return false;
}

} // namespace cerberus::policy
