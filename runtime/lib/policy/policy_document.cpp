// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_document.hpp"

#include "policy/rule_lists.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

namespace cerberus::policy {

std::string host_rule_text(const HostRule& rule)
{
    if (!rule.text.empty())
        return rule.text;
    std::string host = rule.host_name;
    if (rule.network) {
        char text[INET6_ADDRSTRLEN] = "";
        inet_ntop(rule.network->family, rule.network->addr.data(), text, sizeof(text));
        unsigned full = rule.network->family == AF_INET ? 32 : 128;
        host = text;
        if (rule.network->prefix != full)
            host += "/" + std::to_string(rule.network->prefix);
        if (rule.network->family == AF_INET6 && !(rule.ports == PortRange{}))
            host = "[" + host + "]";
    }
    if (rule.ports == PortRange{})
        return host;
    std::string ports = std::to_string(rule.ports.first);
    if (rule.ports.last != rule.ports.first)
        ports += "-" + std::to_string(rule.ports.last);
    return host + ":" + ports;
}

nlohmann::ordered_json to_document(const Policy& policy)
{
    nlohmann::ordered_json document;
    document["mode"] = policy.mode == Mode::audit ? "audit" : "enforce";
    for (const auto& list : rule_lists())
        if (list.present(policy))
            document[list.name] = list.write(policy);
    if (policy.enforcement != Enforcement::automatic)
        document["enforcement"] = enforcement_name(policy.enforcement);
    return document;
}

std::string policy_document(const Policy& policy)
{
    auto document = to_document(policy);
    for (const auto& list : rule_lists())
        if (!list.enforced_inside)
            document.erase(list.name);
    return document.dump();
}

} // namespace cerberus::policy
