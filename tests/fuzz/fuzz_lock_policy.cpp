// SPDX-License-Identifier: Apache-2.0
// Where a policy comes from (annotations, profiles, --default-policy) and
// --lock-policy narrowing. Input: the default policy, a NUL, the inline
// annotation, and optionally a NUL and a profile name; a default that does
// not parse stands for none. Whatever resolve_policy accepts under
// --lock-policy allows nothing the default does not (checked with the naive
// reference, and allowed_http by requests its entries allow), and a refusal for a path names one the reference finds widened.
#include "base/error.hpp"
#include "policy/policy.hpp"
#include "policy/policy_http.hpp"
#include "reference_access.hpp"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

using namespace cerberus::policy;

namespace {

std::string policy_dir;

void write(const std::string& path, const std::string& text)
{
    std::ofstream(path, std::ios::trunc) << text;
}

// Requests a narrowed allowed_http entry allows (each `*` of its host and
// path filled in, a final one also with more segments): the default must allow each.
void check_requests_within(const Policy& base, const Policy& narrowed)
{
    for (const auto& rule : narrowed.allowed_http) {
        std::string host = rule.host_name.starts_with("*.") ? "x" + rule.host_name.substr(1) : rule.host_name;
        std::string path;
        for (char c : rule.path)
            path += c == '*' ? std::string("x") : std::string(1, c);
        std::vector<std::string> paths{path};
        if (rule.path.ends_with('*'))
            paths.push_back(path + "/y/z");
        for (const auto& probe : paths)
            if (!decide_http(base.allowed_http, rule.method, host, rule.port, probe, rule.websocket).allowed)
                reference::fail("narrowing allowed the request \"" + rule.text + "\"");
    }
}

void check_narrowed(const Policy& base, const Policy& narrowed)
{
    check_requests_within(base, narrowed);
    if (base.mode == Mode::enforce && narrowed.mode != Mode::enforce)
        reference::fail("audit mode under an enforcing default");
    for (const auto& path : reference::probe_paths({&base, &narrowed})) {
        if (!reference::within(reference::path_access(narrowed, path), reference::path_access(base, path)))
            reference::fail("narrowing widened \"" + path + "\"");
    }
    if (base.allowed_bins) {
        for (const auto& bin : narrowed.allowed_bins.value_or(std::vector<std::string>{"(absent)"})) {
            if (std::find(base.allowed_bins->begin(), base.allowed_bins->end(), bin) == base.allowed_bins->end())
                reference::fail("narrowing allowed the binary \"" + bin + "\"");
        }
    }
    for (int cap : base.forbidden_caps) {
        if (!std::binary_search(narrowed.forbidden_caps.begin(), narrowed.forbidden_caps.end(), cap))
            reference::fail("narrowing dropped a forbidden capability");
    }
    if (!base.allowed_hosts)
        return;
    if (!narrowed.allowed_hosts)
        reference::fail("narrowing dropped allowed_hosts");
    for (const auto& rule : *narrowed.allowed_hosts) {
        if (!rule.network) {
            for (const auto& name : reference::probe_names(rule.host_name)) {
                for (unsigned port : {unsigned(rule.ports.first), unsigned(rule.ports.last)}) {
                    if (!reference::name_allowed(base, name, port))
                        reference::fail("narrowing allowed a name \"" + rule.text + "\"");
                }
            }
            continue;
        }
        Cidr first = *rule.network, last = *rule.network;
        last.prefix = first.prefix = first.family == AF_INET ? 32 : 128;
        for (unsigned bit = rule.network->prefix; bit < first.prefix; ++bit)
            last.addr[bit / 8] |= static_cast<uint8_t>(0x80 >> (bit % 8));
        for (const auto& address : {first, last}) {
            for (unsigned port : {unsigned(rule.ports.first), unsigned(rule.ports.last)}) {
                if (!reference::host_allowed(base, address, port))
                    reference::fail("narrowing allowed a host \"" + rule.text + "\"");
            }
        }
    }
}

// A refusal that says a path was widened must be one the reference sees.
void check_refusal(const Policy& base, const Policy& annotation, const std::string& message)
{
    if (message.find(" makes ") == std::string::npos)
        return;
    Policy combined = annotation;
    if (!annotation.restricts_paths()) {
        combined.allowed_paths = base.allowed_paths;
        combined.read_only_paths = base.read_only_paths;
    }
    if (!annotation.allowed_bins)
        combined.allowed_bins = base.allowed_bins;
    combined.denied_paths.insert(combined.denied_paths.end(), base.denied_paths.begin(), base.denied_paths.end());
    for (const auto& path : reference::probe_paths({&base, &combined})) {
        if (!reference::within(reference::path_access(combined, path), reference::path_access(base, path)))
            return;
    }
    reference::fail("refused a narrowing the reference accepts: " + message);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    char pattern[] = "/tmp/cerberus-fuzz-sources.XXXXXX";
    if (!mkdtemp(pattern))
        std::abort();
    policy_dir = pattern;
    write(policy_dir + "/web.json", R"({"allowed_hosts": ["192.0.2.0/24:443"], "read_only_paths": ["/"]})");
    write(policy_dir + "/open.json", R"({"mode": "audit"})");
    std::atexit([] { std::filesystem::remove_all(policy_dir); });
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string input(reinterpret_cast<const char*>(data), size);
    size_t first = input.find('\0');
    if (first == std::string::npos)
        return 0;
    std::string default_text = input.substr(0, first);
    std::string rest = input.substr(first + 1);
    size_t second = rest.find('\0');
    std::map<std::string, std::string> annotations;
    annotations[inline_annotation] = rest.substr(0, second);
    if (second != std::string::npos)
        annotations[profile_annotation] = rest.substr(second + 1);

    std::optional<Policy> base;
    try {
        base = parse_policy(default_text);
    } catch (const cerberus::Error&) {
    }
    PolicySources sources{.policy_dir = policy_dir, .lock = true};
    if (base) {
        sources.default_policy_file = policy_dir + "/default.json";
        write(sources.default_policy_file, default_text);
    }
    std::optional<Policy> chosen;
    try {
        chosen = resolve_policy(annotations, sources);
    } catch (const cerberus::Error& e) {
        if (base && e.errnum() == EPERM && second == std::string::npos) {
            try {
                auto annotation = parse_policy(annotations[inline_annotation]);
                check_refusal(*base, annotation, e.what());
            } catch (const cerberus::Error&) {
            }
        }
        return 0;
    }
    if (base && chosen)
        check_narrowed(*base, *chosen);
    return 0;
}
