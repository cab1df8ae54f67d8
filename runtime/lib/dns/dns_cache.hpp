// SPDX-License-Identifier: Apache-2.0
// The DNS gate's answer cache: whole answers of a container's upstream (the
// network namespace its nameservers are reached from and the nameservers of
// its resolv.conf), kept as long as their records' TTLs say (RFC 1035 3.2.1),
// negative answers as long as their SOA says (RFC 2308 5), and given back with
// every TTL lowered by the time they were kept. It saves only the trip to the
// nameserver: the gate judges a cached answer by the asking container's
// policy and admits its addresses for that container, as it does a fresh one.
// Bounded: cache_max_entries answers and cache_max_bytes of messages at most,
// the least recently used going first.
#pragma once

#include "dns/dns_answers.hpp"

#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace cerberus::dns {

inline constexpr size_t cache_max_entries = 16384;
inline constexpr size_t cache_max_bytes = size_t{4} << 20; // of messages; with the keys and lists, under 9 MB
inline constexpr size_t cache_max_message = 4096; // a larger answer is not kept
inline constexpr uint32_t cache_max_seconds = 3600; // as admission's clamp (max_ttl_seconds)
inline constexpr uint32_t cache_max_negative_seconds = 900; // a name made later is seen within 15 minutes

// What an answer depends on beyond its question, read from the query: its
// question, the header's RD and CD bits and EDNS's DO bit (the key's flags),
// and the largest answer its sender takes over UDP (512 without EDNS).
// nullopt for a query the cache does not serve: one with records of its
// own, or EDNS options (cookies, client subnet) an answer may depend on.
struct QueryShape {
    Question question;
    uint8_t flags = 0;
    size_t udp_limit = 512;
};
std::optional<QueryShape> query_shape(std::span<const uint8_t> query);

// The cache's key: the upstream's own words (any text naming it alone) and the shape.
std::string cache_key(const std::string& upstream, const QueryShape& shape);

// How long an answer may be kept, in seconds: a positive answer the least TTL
// of its records (OPT aside); a negative one (NXDOMAIN, or NOERROR with no
// answer record) the least of its authority SOA's TTL and MINIMUM. nullopt
// when it is not kept: another rcode, truncated, negative without an SOA, 0.
std::optional<uint32_t> cache_seconds(std::span<const uint8_t> answer);

// Lowers the TTL of every record (OPT's field holds flags, left alone) by
// seconds, down to 0. False when the message cannot be read.
bool age_ttls(std::span<uint8_t> message, uint32_t seconds);

// The answer as given back for a query: the query's id, and its question's
// name spelled as the query spells it (case), no AA (the gate is no authority).
void answer_for(std::span<uint8_t> answer, std::span<const uint8_t> query);

class AnswerCache {
public:
    explicit AnswerCache(size_t max_entries = cache_max_entries, size_t max_bytes = cache_max_bytes)
        : max_entries_(max_entries), max_bytes_(max_bytes)
    {
    }

    // Keeps the answer under key (replacing what it held) when cache_seconds
    // allows it and it is small enough; evicts the least recently used to
    // stay within the bounds. Returns whether it was kept.
    bool store(const std::string& key, std::span<const uint8_t> answer, uint64_t now_ns);

    // The kept answer with its TTLs lowered by the seconds it was kept,
    // rounded up (an agent never holds an address longer than the gate's
    // admission of it lasts); nullopt when none is kept or its time is up
    // (then it goes).
    std::optional<std::vector<uint8_t>> lookup(const std::string& key, uint64_t now_ns);

    // Every answer of the upstream: no container served uses it any more.
    void forget_upstream(const std::string& upstream);

    size_t entries() const { return index_.size(); }
    size_t bytes() const { return bytes_; }

private:
    struct Entry {
        std::string key;
        std::vector<uint8_t> message;
        uint64_t stored_ns = 0;
        uint32_t seconds = 0;
    };
    using Lru = std::list<Entry>; // the most recently used first

    void erase(Lru::iterator it);

    size_t max_entries_, max_bytes_, bytes_ = 0;
    Lru lru_;
    std::unordered_map<std::string, Lru::iterator> index_;
};

} // namespace cerberus::dns
