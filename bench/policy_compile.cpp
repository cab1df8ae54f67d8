// SPDX-License-Identifier: Apache-2.0
// CPU cost of turning a large policy into map entries, before anything is
// installed: allowed_hosts of N distinct addresses (half IPv4, half IPv6,
// every fourth also a covering /24 or /120 with its own port), compiled and,
// with a locked default of the same hosts, narrowed. Prints CPU seconds per step.
// usage: cerberus-bench-compile [N ...]   (default: 2048 65536)
#include "policy/policy.hpp"
#include "policy/policy_compile.hpp"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

using namespace cerberus::policy;

namespace {

std::string hosts_json(int n)
{
    std::string json = R"({"allowed_hosts": [)";
    for (int i = 0; i < n; ++i) {
        char entry[96];
        int a = (i >> 16) & 0xff, b = (i >> 8) & 0xff, c = i & 0xff;
        if (i % 2 == 0)
            std::snprintf(entry, sizeof(entry), R"("10.%d.%d.%d:443")", a, b, c);
        else
            std::snprintf(entry, sizeof(entry), R"("[2001:db8::%x:%x]:443")", (a << 8) | b, c);
        json += (i ? "," : "") + std::string(entry);
        if (i % 4 == 0) {
            std::snprintf(entry, sizeof(entry), R"(,"10.%d.%d.0/24:80")", a, b);
            json += entry;
        }
    }
    return json + "]}";
}

// CPU seconds, not wall time: the machine may be shared.
double cpu_now()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

template <typename Fn>
double seconds(Fn&& fn)
{
    double start = cpu_now();
    fn();
    return cpu_now() - start;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<int> sizes;
    for (int i = 1; i < argc; ++i)
        sizes.push_back(std::atoi(argv[i]));
    if (sizes.empty())
        sizes = {2048, 65536};
    std::printf("%8s %10s %10s %10s  %s\n", "hosts", "parse cpu", "compile", "narrow", "compile result");
    for (int n : sizes) {
        std::string json = hosts_json(n);
        Policy policy;
        double parse = seconds([&] { policy = parse_policy(json); });
        std::string result;
        double compile = seconds([&] {
            try {
                auto out = compile_policy(policy, 1, 0);
                result = std::to_string(out.net4.size() + out.net6.size()) + " entries";
            } catch (const std::exception& e) {
                result = e.what();
            }
        });
        double narrow = seconds([&] { narrow_policy(policy, policy); });
        std::printf("%8d %10.3f %10.3f %10.3f  %s\n", n, parse, compile, narrow, result.c_str());
    }
    return 0;
}
