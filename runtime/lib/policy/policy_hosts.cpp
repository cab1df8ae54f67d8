// SPDX-License-Identifier: Apache-2.0
// allowed_hosts entries: addresses, CIDRs, host names, ports.
#include "policy/policy.hpp"

#include "base/error.hpp"
#include "base/numbers.hpp"
#include "base/text.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <string_view>

namespace cerberus::policy {

namespace {

[[noreturn]] void invalid(const std::string& field, const std::string& what, const std::string& text)
{
    throw Error(field + ": " + what + " \"" + text + "\"", EINVAL);
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

bool valid_label(std::string_view label)
{
    return !label.empty() && label.size() <= 63 && label.front() != '-' && label.back() != '-' &&
           std::all_of(label.begin(), label.end(),
                       [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

// Why name (canonical, "*." kept) is no host name, or nullptr when it is one.
const char* host_name_fault(const std::string& name)
{
    std::string_view rest = name;
    if (rest.starts_with("*."))
        rest.remove_prefix(2);
    if (rest.find('*') != std::string_view::npos)
        return "a wildcard is only a leading \"*.\" before a name";
    if (rest.empty())
        return "empty host name";
    if (rest.size() > 253)
        return "host name longer than 253 bytes";
    std::string_view last;
    for (size_t start = 0;;) {
        size_t dot = rest.find('.', start);
        std::string_view label = rest.substr(start, dot == std::string_view::npos ? rest.npos : dot - start);
        if (label.empty())
            return "empty label in host name";
        if (label.size() > 63)
            return "label longer than 63 bytes in host name";
        if (!valid_label(label))
            return "bad character in host name";
        last = label;
        if (dot == std::string_view::npos)
            break;
        start = dot + 1;
    }
    // 1.2.3 or 300.1.1.1: a mistyped address, never a name.
    if (std::all_of(last.begin(), last.end(), [](unsigned char c) { return std::isdigit(c); }))
        return "bad address or host name";
    return nullptr;
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
    else if (slash != std::string::npos && !host_name_fault(canonical_host_name(address)))
        invalid(field, "a host name cannot have a CIDR suffix", entry);
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
        std::string name = canonical_host_name(host);
        if (const char* fault = host_name_fault(name))
            invalid(field, fault, text);
        rule.host_name = std::move(name);
    }
    return rule;
}

bool has_host_names(const Policy& policy)
{
    return (policy.allowed_hosts && std::any_of(policy.allowed_hosts->begin(), policy.allowed_hosts->end(),
                                                [](const HostRule& rule) { return !rule.network; })) ||
           (policy.ask_hosts && !policy.ask_hosts->names.empty()) || !policy.allowed_http.empty();
}

bool host_pattern_covers(const std::string& wide, const std::string& pattern)
{
    if (!pattern.starts_with("*."))
        return host_name_matches(wide, pattern);
    std::string parent = pattern.substr(2);
    return wide.starts_with("*.") && (wide == pattern || host_name_matches(wide, parent));
}

bool host_name_matches(const std::string& pattern, const std::string& name)
{
    std::string asked = canonical_host_name(name);
    if (!pattern.starts_with("*."))
        return asked == pattern;
    std::string_view suffix = std::string_view(pattern).substr(1); // ".example.com"
    if (asked.size() <= suffix.size() || !asked.ends_with(suffix))
        return false;
    std::string_view labels = std::string_view(asked).substr(0, asked.size() - suffix.size());
    return labels.front() != '.' && labels.back() != '.' && labels.find("..") == std::string_view::npos;
}

} // namespace cerberus::policy
