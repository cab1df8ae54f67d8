// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_document.hpp"

#include "process/capabilities.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>

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
    if (policy.allowed_hosts) {
        std::vector<std::string> hosts;
        for (const auto& rule : *policy.allowed_hosts) {
            std::string text = host_rule_text(rule);
            if (std::find(hosts.begin(), hosts.end(), text) == hosts.end())
                hosts.push_back(text);
        }
        document["allowed_hosts"] = hosts;
    }
    if (policy.allowed_paths)
        document["allowed_paths"] = *policy.allowed_paths;
    if (policy.read_only_paths)
        document["read_only_paths"] = *policy.read_only_paths;
    if (!policy.denied_paths.empty())
        document["denied_paths"] = policy.denied_paths;
    if (policy.allowed_bins)
        document["allowed_bins"] = *policy.allowed_bins;
    if (!policy.forbidden_caps.empty()) {
        std::vector<std::string> caps;
        for (int cap : policy.forbidden_caps)
            caps.emplace_back(capabilities::capability_name(cap));
        document["forbidden_caps"] = caps;
    }
    if (policy.enforcement != Enforcement::automatic)
        document["enforcement"] = enforcement_name(policy.enforcement);
    return document;
}

std::string policy_document(const Policy& policy)
{
    auto document = to_document(policy);
    document.erase("allowed_hosts");
    return document.dump();
}

} // namespace cerberus::policy
