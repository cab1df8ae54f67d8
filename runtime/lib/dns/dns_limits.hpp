// SPDX-License-Identifier: Apache-2.0
// What one container may cost the DNS gate, so that a flooding neighbour
// delays only its own answers (docs/policy.md, "The gate under a hostile
// neighbour"): queries taken in per second, REFUSED replies sent for those
// over that rate (the rest dropped, counted), TCP connections held, and trail
// records written per second, per kind (the rest counted, so the trail cannot
// be flooded either). Queries in flight are the pending table's (dns_pending).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace cerberus::dns {

// So many events a second on average, bursts of up to burst at once.
class TokenBucket {
public:
    using Clock = std::chrono::steady_clock;

    TokenBucket(double per_second, double burst) : rate_(per_second), burst_(burst), tokens_(burst) {}

    // True, taking a token, when one is there at now.
    bool take(Clock::time_point now);

private:
    double rate_, burst_, tokens_;
    Clock::time_point last_{};
};

// An agent's resolver sends two queries a lookup (A and AAAA): 5,000 a second, in bursts of as many, lets a
// tight loop of lookups through (bench/dns.sh's 2,000 at 20,000 a second) and keeps a flood's share of the
// gate small (tests/integration/dns_flood.sh).
inline constexpr double query_rate = 5000, query_burst = 5000;
inline constexpr double refusal_rate = 1000, refusal_burst = 100;
inline constexpr double record_rate = 50, record_burst = 200;
// Each of the gate's own limits has a record budget apart from the names' and the other limits': a flood
// that spends one (the query rate) cannot hide that another limit was reached (the TCP connections).
inline constexpr double limit_record_rate = 5, limit_record_burst = 20;
// glibc opens one connection per lookup and closes it; 32 at once is a busy agent's worst.
inline constexpr size_t max_tcp_per_container = 32;

// What a trail record is about, each with its own budget.
enum class RecordKind { name, query_rate, queries_in_flight, tcp_connections, admitted_pairs, count };
struct ContainerLimits {
    TokenBucket queries{query_rate, query_burst};
    TokenBucket refusals{refusal_rate, refusal_burst};
    std::array<TokenBucket, static_cast<size_t>(RecordKind::count)> records{
        TokenBucket{record_rate, record_burst}, TokenBucket{limit_record_rate, limit_record_burst},
        TokenBucket{limit_record_rate, limit_record_burst}, TokenBucket{limit_record_rate, limit_record_burst},
        TokenBucket{limit_record_rate, limit_record_burst}};
    size_t tcp_connections = 0;
    uint64_t dropped = 0;    // queries over both rates since the last count written
    uint64_t unrecorded = 0; // trail records over their rate since the last count written
};

} // namespace cerberus::dns
