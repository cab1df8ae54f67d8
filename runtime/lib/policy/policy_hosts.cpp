// SPDX-License-Identifier: Apache-2.0
// allowed_hosts entries: addresses, CIDRs, host names, ports.
#include "policy/policy.hpp"

#include "base/error.hpp"

#include <arpa/inet.h>
#include <netdb.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>

namespace cerberus::policy {

namespace {

[[noreturn]] void invalid(const std::string& field, const std::string& what, const std::string& text)
{
    throw Error(field + ": " + what + " \"" + text + "\"", EINVAL);
}

std::optional<unsigned> parse_number(std::string_view text, unsigned max)
{
    unsigned value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max)
        return std::nullopt;
    return value;
}

PortRange parse_ports(const std::string& text, const std::string& field, const std::string& entry)
{
    auto dash = text.find('-');
    auto first = parse_number(text.substr(0, dash), 65535);
    auto last = dash == std::string::npos ? first : parse_number(text.substr(dash + 1), 65535);
    if (!first || !last || *first == 0 || *first > *last)
        invalid(field, "bad port or port range", entry);
    return {static_cast<uint16_t>(*first), static_cast<uint16_t>(*last)};
}

bool host_bits_zero(const Cidr& network)
{
    size_t bytes = network.family == AF_INET ? 4 : 16;
    for (size_t bit = network.prefix; bit < bytes * 8; ++bit) {
        if (network.addr[bit / 8] & (0x80 >> (bit % 8)))
            return false;
    }
    return true;
}

// "10.0.0.0/8", "2001:db8::/32" or a bare address; nullopt when it is not one.
std::optional<Cidr> parse_network(const std::string& text, const std::string& field, const std::string& entry)
{
    auto slash = text.find('/');
    std::string address = text.substr(0, slash);
    Cidr network;
    if (inet_pton(AF_INET, address.c_str(), network.addr.data()) == 1)
        network.family = AF_INET;
    else if (inet_pton(AF_INET6, address.c_str(), network.addr.data()) == 1)
        network.family = AF_INET6;
    else if (slash != std::string::npos)
        invalid(field, "bad CIDR", entry);
    else
        return std::nullopt;
    unsigned max_prefix = network.family == AF_INET ? 32 : 128;
    network.prefix = max_prefix;
    if (slash != std::string::npos) {
        auto prefix = parse_number(std::string_view(text).substr(slash + 1), max_prefix);
        if (!prefix)
            invalid(field, "bad CIDR", entry);
        network.prefix = *prefix;
        if (!host_bits_zero(network))
            invalid(field, "bad CIDR (host bits set)", entry);
    }
    return network;
}

bool valid_host_name(const std::string& name)
{
    if (name.empty() || name.size() > 253 || name.front() == '-' || name.front() == '.')
        return false;
    return std::all_of(name.begin(), name.end(),
                       [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.' || c == '_'; });
}

} // namespace

bool Cidr::contains(const Cidr& other) const
{
    if (family != other.family || prefix > other.prefix)
        return false;
    for (unsigned bit = 0; bit < prefix; ++bit) {
        uint8_t mask = 0x80 >> (bit % 8);
        if ((addr[bit / 8] & mask) != (other.addr[bit / 8] & mask))
            return false;
    }
    return true;
}

HostRule parse_host_rule(const std::string& text, const std::string& field)
{
    HostRule rule{.text = text};
    std::string host = text;
    if (!text.empty() && text[0] == '[') {
        auto close = text.find(']');
        if (close == std::string::npos)
            invalid(field, "missing \"]\" in", text);
        host = text.substr(1, close - 1);
        std::string rest = text.substr(close + 1);
        if (!rest.empty() && rest[0] != ':')
            invalid(field, "expected \":PORT\" after \"]\" in", text);
        if (!rest.empty())
            rule.ports = parse_ports(rest.substr(1), field, text);
        rule.network = parse_network(host, field, text);
        if (!rule.network || rule.network->family != AF_INET6)
            invalid(field, "bad IPv6 address", text);
        return rule;
    }
    // Two colons or more: a bare IPv6 address or CIDR, which cannot carry a port.
    if (std::count(text.begin(), text.end(), ':') < 2) {
        auto colon = text.rfind(':');
        if (colon != std::string::npos) {
            host = text.substr(0, colon);
            rule.ports = parse_ports(text.substr(colon + 1), field, text);
        }
    }
    rule.network = parse_network(host, field, text);
    if (!rule.network) {
        if (!valid_host_name(host))
            invalid(field, "bad address or host name", text);
        rule.host_name = host;
    }
    return rule;
}

std::vector<Cidr> resolve_with_getaddrinfo(const std::string& host_name)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = getaddrinfo(host_name.c_str(), nullptr, &hints, &found);
    if (rc != 0)
        throw Error("cannot resolve \"" + host_name + "\": " + gai_strerror(rc), rc == EAI_SYSTEM ? errno : ENOENT);
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, freeaddrinfo);
    std::vector<Cidr> addresses;
    for (auto* info = found; info; info = info->ai_next) {
        Cidr address{.family = info->ai_family};
        if (info->ai_family == AF_INET) {
            std::memcpy(address.addr.data(), &reinterpret_cast<sockaddr_in*>(info->ai_addr)->sin_addr, 4);
            address.prefix = 32;
        } else if (info->ai_family == AF_INET6) {
            std::memcpy(address.addr.data(), &reinterpret_cast<sockaddr_in6*>(info->ai_addr)->sin6_addr, 16);
            address.prefix = 128;
        } else {
            continue;
        }
        if (std::find(addresses.begin(), addresses.end(), address) == addresses.end())
            addresses.push_back(address);
    }
    return addresses;
}

Policy resolve_host_names(Policy policy, const HostResolver& resolve)
{
    if (!policy.allowed_hosts)
        return policy;
    std::vector<HostRule> resolved;
    for (size_t i = 0; i < policy.allowed_hosts->size(); ++i) {
        const auto& rule = (*policy.allowed_hosts)[i];
        if (rule.network) {
            resolved.push_back(rule);
            continue;
        }
        auto addresses = with_context("policy.allowed_hosts[" + std::to_string(i) + "]",
                                      [&] { return resolve(rule.host_name); });
        if (addresses.empty())
            throw Error("policy.allowed_hosts[" + std::to_string(i) + "]: \"" + rule.host_name +
                            "\" has no IPv4 or IPv6 address",
                        ENOENT);
        for (const auto& address : addresses)
            resolved.push_back({.text = rule.text, .network = address, .ports = rule.ports});
    }
    policy.allowed_hosts = std::move(resolved);
    return policy;
}

} // namespace cerberus::policy
