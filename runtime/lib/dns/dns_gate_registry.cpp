// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_gate_registry.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "base/served_containers.hpp"
#include "policy/policy_ask_hosts.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <spdlog/spdlog.h>

#include <ctime>
#include <sstream>

namespace cerberus::dns {
namespace {

std::string rfc3339_seconds(int64_t wall_seconds)
{
    time_t t = static_cast<time_t>(wall_seconds);
    tm utc{};
    gmtime_r(&t, &utc);
    char text[32];
    strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

} // namespace

daemon::Daemon gate_daemon()
{
    return {run_dir, "gate", "dns-gate", "the DNS gate"};
}

Registration registration_of(const std::string& id, uint64_t cgroup_id, const std::string& trail,
                             const policy::Policy& policy, std::vector<std::string> nameservers,
                             std::string egress_dir)
{
    Registration registration{.id = id, .cgroup_id = cgroup_id, .trail = trail,
                              .audit = policy.mode == policy::Mode::audit, .nameservers = std::move(nameservers)};
    for (const auto& rule : policy.allowed_hosts.value_or(std::vector<policy::HostRule>{})) {
        if (!rule.host_name.empty())
            registration.names.push_back({rule.host_name, {rule.ports}});
        else if (rule.network)
            registration.networks.push_back(rule.text);
    }
    if (policy.ask_hosts) {
        for (const auto& rule : policy.ask_hosts->names)
            registration.ask_names.push_back({rule.host_name, {rule.ports}});
        registration.ask_timeout = policy::ask_timeout_of(*policy.ask_hosts);
    }
    registration.http = policy.allowed_http;
    if (!registration.http.empty())
        registration.egress_dir = std::move(egress_dir);
    return registration;
}

std::vector<NameRule> http_hosts_of(const Registration& registration)
{
    std::vector<NameRule> hosts;
    for (const auto& rule : registration.http)
        hosts.push_back({rule.host_name, {{rule.port, rule.port}}});
    return hosts;
}

std::vector<std::string> nameservers_of(const std::string& resolv_conf)
{
    std::vector<std::string> servers;
    std::istringstream lines(resolv_conf);
    for (std::string line; std::getline(lines, line) && servers.size() < 3;) {
        std::istringstream words(line);
        std::string keyword, address;
        if (!(words >> keyword >> address) || keyword != "nameserver")
            continue;
        std::string text = address.find(':') != std::string::npos ? "[" + address + "]:53" : address + ":53";
        if (parse_endpoint(text))
            servers.push_back(text);
        else
            spdlog::warn("resolv.conf: nameserver {} is not an address the DNS gate can reach; skipped", address);
    }
    if (servers.empty())
        servers.push_back("127.0.0.1:53");
    return servers;
}

std::optional<Endpoint> parse_endpoint(const std::string& text)
{
    size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon + 1 >= text.size())
        return std::nullopt;
    std::string host = text.substr(0, colon);
    Endpoint endpoint;
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        endpoint.family = AF_INET6;
        host = host.substr(1, host.size() - 2);
    } else {
        endpoint.family = AF_INET;
    }
    if (inet_pton(endpoint.family, host.c_str(), endpoint.addr.data()) != 1)
        return std::nullopt;
    try {
        size_t used = 0;
        unsigned long port = std::stoul(text.substr(colon + 1), &used);
        if (used != text.size() - colon - 1 || port == 0 || port > 65535)
            return std::nullopt;
        endpoint.port = static_cast<uint16_t>(port);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return endpoint;
}

Address address_of(const Endpoint& endpoint)
{
    Address address{};
    if (endpoint.family == AF_INET) {
        address[10] = address[11] = 0xff;
        std::copy_n(endpoint.addr.begin(), 4, address.begin() + 12);
    } else {
        address = endpoint.addr;
    }
    return address;
}

namespace {

nlohmann::json names_json(const std::vector<NameRule>& rules)
{
    nlohmann::json names = nlohmann::json::array();
    for (const auto& rule : rules) {
        nlohmann::json ports = nlohmann::json::array();
        for (const auto& range : rule.ports)
            ports.push_back({range.first, range.last});
        names.push_back({{"name", rule.pattern}, {"ports", ports}});
    }
    return names;
}

std::vector<NameRule> names_from_json(const nlohmann::json& names)
{
    std::vector<NameRule> rules;
    for (const auto& name : names) {
        NameRule rule{name.at("name").get<std::string>(), {}};
        for (const auto& range : name.at("ports"))
            rule.ports.push_back({range.at(0).get<uint16_t>(), range.at(1).get<uint16_t>()});
        rules.push_back(std::move(rule));
    }
    return rules;
}

nlohmann::json http_json(const std::vector<policy::HttpRule>& rules)
{
    nlohmann::json http = nlohmann::json::array();
    for (const auto& rule : rules)
        http.push_back({{"text", rule.text}, {"method", rule.method}, {"host", rule.host_name}, {"port", rule.port},
                        {"path", rule.path}, {"websocket", rule.websocket}});
    return http;
}

std::vector<policy::HttpRule> http_from_json(const nlohmann::json& http)
{
    std::vector<policy::HttpRule> rules;
    for (const auto& rule : http)
        rules.push_back({rule.at("text").get<std::string>(), rule.at("method").get<std::string>(),
                         rule.at("host").get<std::string>(), rule.at("port").get<uint16_t>(),
                         rule.at("path").get<std::string>(), rule.value("websocket", false)});
    return rules;
}

} // namespace

nlohmann::json to_json(const Registration& registration)
{
    return {{"id", registration.id},
            {"cgroup_id", registration.cgroup_id},
            {"trail", registration.trail},
            {"mode", registration.audit ? "audit" : "enforce"},
            {"names", names_json(registration.names)},
            {"ask_names", names_json(registration.ask_names)},
            {"ask_timeout_ms", registration.ask_timeout.count()},
            {"http", http_json(registration.http)},
            {"egress_dir", registration.egress_dir},
            {"networks", registration.networks},
            {"nameservers", registration.nameservers}};
}

Registration registration_from_json(const nlohmann::json& j)
{
    Registration registration;
    registration.id = j.at("id").get<std::string>();
    registration.cgroup_id = j.at("cgroup_id").get<uint64_t>();
    registration.trail = j.at("trail").get<std::string>();
    registration.audit = j.value("mode", "enforce") == "audit"; // none said: enforce
    registration.names = names_from_json(j.at("names"));
    // A registration written before ask_hosts has none.
    registration.ask_names = names_from_json(j.value("ask_names", nlohmann::json::array()));
    registration.ask_timeout = std::chrono::milliseconds(j.value("ask_timeout_ms", int64_t{0}));
    registration.http = http_from_json(j.value("http", nlohmann::json::array()));
    registration.egress_dir = j.value("egress_dir", "");
    registration.networks = j.at("networks").get<std::vector<std::string>>();
    registration.nameservers = j.at("nameservers").get<std::vector<std::string>>();
    return registration;
}

std::vector<policy::Cidr> networks_of(const Registration& registration)
{
    std::vector<policy::Cidr> networks;
    for (size_t i = 0; i < registration.networks.size(); ++i)
        if (auto rule = policy::parse_host_rule(registration.networks[i], "networks[" + std::to_string(i) + "]");
            rule.network)
            networks.push_back(*rule.network);
    return networks;
}

std::string registration_path(uint64_t cgroup_id)
{
    return daemon::registration_file(run_dir, cgroup_id);
}

std::string admitted_path(uint64_t cgroup_id)
{
    return std::string(run_dir) + "/admitted/" + std::to_string(cgroup_id) + ".json";
}

void write_registration(const Registration& registration)
{
    daemon::write_registration_file(run_dir, registration.cgroup_id, to_json(registration));
}

std::vector<Registration> read_registrations(const daemon::SkipCgroup& skip)
{
    return daemon::read_registrations(std::string(run_dir) + "/containers", registration_from_json, skip);
}

void remove_registration(uint64_t cgroup_id)
{
    for (const auto& path : {registration_path(cgroup_id), admitted_path(cgroup_id)})
        if (unlink(path.c_str()) < 0 && errno != ENOENT)
            throw_errno("removing " + path);
}

nlohmann::json admitted_json(const std::vector<Admitted>& admitted)
{
    timespec wall{};
    clock_gettime(CLOCK_REALTIME, &wall);
    int64_t boot_now = static_cast<int64_t>(boot_now_ns());
    nlohmann::json list = nlohmann::json::array();
    for (const auto& entry : admitted) {
        int64_t left_s = (static_cast<int64_t>(entry.value.expires_ns) - boot_now) / 1000000000;
        list.push_back({{"name", entry.name},
                        {"address", address_text(entry.address)},
                        {"ports", ports_text(entry.value.ports)},
                        {"expires", rfc3339_seconds(wall.tv_sec + left_s)},
                        {"expires_ns", entry.value.expires_ns}});
    }
    return list;
}

void write_admitted(uint64_t cgroup_id, const std::vector<Admitted>& admitted)
{
    files::make_dirs(std::string(run_dir) + "/admitted", 0700);
    files::write_file_atomic(admitted_path(cgroup_id), admitted_json(admitted).dump() + "\n", 0600);
}

nlohmann::json read_admitted_json(uint64_t cgroup_id)
{
    auto text = files::read_file_if_exists(admitted_path(cgroup_id));
    if (!text)
        return nlohmann::json::array();
    auto j = nlohmann::json::parse(*text, nullptr, false);
    return j.is_array() ? j : nlohmann::json::array();
}

std::vector<Admitted> read_admitted(uint64_t cgroup_id)
{
    std::vector<Admitted> admitted;
    for (const auto& entry : read_admitted_json(cgroup_id)) {
        try {
            Admitted one{entry.at("name").get<std::string>(), {}, {}};
            auto endpoint = parse_endpoint(entry.at("address").get<std::string>().find(':') != std::string::npos
                                               ? "[" + entry.at("address").get<std::string>() + "]:1"
                                               : entry.at("address").get<std::string>() + ":1");
            if (!endpoint)
                continue;
            one.address = address_of(*endpoint);
            admitted.push_back(one);
        } catch (const std::exception&) {
        }
    }
    return admitted;
}

} // namespace cerberus::dns
