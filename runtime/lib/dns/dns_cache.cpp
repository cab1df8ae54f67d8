// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_cache.hpp"

#include <arpa/nameser.h>
#include <resolv.h>
#include <strings.h>

#include <algorithm>
#include <cstring>

namespace cerberus::dns {
namespace {

constexpr uint8_t flag_rd = 1, flag_cd = 2, flag_edns = 4, flag_do = 8;
constexpr uint32_t edns_do = 0x8000; // in the OPT record's TTL field
constexpr uint8_t header_aa = 0x04;  // in the header's third byte
constexpr int soa_fixed = 5 * NS_INT32SZ; // serial, refresh, retry, expire, minimum: the end of an SOA's data
constexpr ns_sect record_sections[] = {ns_s_an, ns_s_ns, ns_s_ar};

bool init(std::span<const uint8_t> message, ns_msg& handle)
{
    return ns_initparse(message.data(), static_cast<int>(message.size()), &handle) == 0;
}

} // namespace

std::optional<QueryShape> query_shape(std::span<const uint8_t> query)
{
    auto parsed = parse_query(query);
    ns_msg handle{};
    if (!parsed || !init(query, handle) || ns_msg_count(handle, ns_s_an) != 0 || ns_msg_count(handle, ns_s_ns) != 0 ||
        ns_msg_count(handle, ns_s_ar) > 1)
        return std::nullopt;
    QueryShape shape{parsed->question, 0, NS_PACKETSZ};
    shape.flags = static_cast<uint8_t>((ns_msg_getflag(handle, ns_f_rd) ? flag_rd : 0) |
                                       (ns_msg_getflag(handle, ns_f_cd) ? flag_cd : 0));
    if (ns_msg_count(handle, ns_s_ar) == 1) {
        ns_rr rr{};
        if (ns_parserr(&handle, ns_s_ar, 0, &rr) < 0 || ns_rr_type(rr) != ns_t_opt || ns_rr_rdlen(rr) != 0)
            return std::nullopt;
        shape.flags |= flag_edns | ((ns_rr_ttl(rr) & edns_do) ? flag_do : 0);
        shape.udp_limit = std::max<size_t>(NS_PACKETSZ, ns_rr_class(rr));
    }
    return shape;
}

std::string cache_key(const std::string& upstream, const QueryShape& shape)
{
    const Question& q = shape.question;
    std::string key = upstream;
    key += '\0';
    key += q.name;
    key += '\0';
    for (uint16_t v : {q.type, q.klass})
        key.append({static_cast<char>(v >> 8), static_cast<char>(v & 0xff)});
    key += static_cast<char>(shape.flags);
    return key;
}

std::optional<uint32_t> cache_seconds(std::span<const uint8_t> answer)
{
    ns_msg handle{};
    if (!init(answer, handle) || ns_msg_getflag(handle, ns_f_qr) == 0 || ns_msg_getflag(handle, ns_f_tc) != 0)
        return std::nullopt;
    int rcode = ns_msg_getflag(handle, ns_f_rcode);
    if (rcode != ns_r_noerror && rcode != ns_r_nxdomain)
        return std::nullopt;
    bool negative = rcode == ns_r_nxdomain || ns_msg_count(handle, ns_s_an) == 0;
    std::optional<uint32_t> least, soa;
    for (ns_sect section : record_sections) {
        for (int i = 0; i < ns_msg_count(handle, section); ++i) {
            ns_rr rr{};
            if (ns_parserr(&handle, section, i, &rr) < 0)
                return std::nullopt;
            if (ns_rr_type(rr) == ns_t_opt)
                continue;
            uint32_t ttl = ns_rr_ttl(rr);
            least = std::min(least.value_or(ttl), ttl);
            if (section == ns_s_ns && ns_rr_type(rr) == ns_t_soa && ns_rr_rdlen(rr) >= soa_fixed && !soa)
                soa = std::min(ttl, static_cast<uint32_t>(ns_get32(ns_rr_rdata(rr) + ns_rr_rdlen(rr) - NS_INT32SZ)));
        }
    }
    // RFC 2308 5: a negative answer is kept by its SOA, and not at all without one.
    std::optional<uint32_t> seconds = negative ? (soa ? std::optional(std::min(*soa, *least)) : std::nullopt) : least;
    if (!seconds || *seconds == 0)
        return std::nullopt;
    return std::min(*seconds, negative ? cache_max_negative_seconds : cache_max_seconds);
}

bool age_ttls(std::span<uint8_t> message, uint32_t seconds)
{
    ns_msg handle{};
    if (!init(message, handle))
        return false;
    for (ns_sect section : record_sections) {
        for (int i = 0; i < ns_msg_count(handle, section); ++i) {
            ns_rr rr{};
            if (ns_parserr(&handle, section, i, &rr) < 0)
                return false;
            if (ns_rr_type(rr) == ns_t_opt)
                continue;
            uint32_t ttl = ns_rr_ttl(rr);
            // The TTL sits before the data's length, which sits before the data.
            size_t at = static_cast<size_t>(ns_rr_rdata(rr) - message.data()) - NS_INT32SZ - NS_INT16SZ;
            ns_put32(ttl > seconds ? ttl - seconds : 0, message.data() + at);
        }
    }
    return true;
}

void answer_for(std::span<uint8_t> answer, std::span<const uint8_t> query)
{
    if (answer.size() < NS_HFIXEDSZ || query.size() < NS_HFIXEDSZ)
        return;
    std::memcpy(answer.data(), query.data(), NS_INT16SZ);
    answer[2] &= static_cast<uint8_t>(~header_aa);
    int in_answer = dn_skipname(answer.data() + NS_HFIXEDSZ, answer.data() + answer.size());
    int in_query = dn_skipname(query.data() + NS_HFIXEDSZ, query.data() + query.size());
    if (in_answer > 0 && in_answer == in_query &&
        strncasecmp(reinterpret_cast<const char*>(answer.data() + NS_HFIXEDSZ),
                    reinterpret_cast<const char*>(query.data() + NS_HFIXEDSZ), static_cast<size_t>(in_query)) == 0)
        std::memcpy(answer.data() + NS_HFIXEDSZ, query.data() + NS_HFIXEDSZ, static_cast<size_t>(in_query));
}

bool AnswerCache::store(const std::string& key, std::span<const uint8_t> answer, uint64_t now_ns)
{
    if (answer.size() > cache_max_message || answer.size() > max_bytes_ || max_entries_ == 0)
        return false;
    auto seconds = cache_seconds(answer);
    if (!seconds)
        return false;
    if (auto it = index_.find(key); it != index_.end())
        erase(it->second);
    while (!lru_.empty() && (index_.size() >= max_entries_ || bytes_ + answer.size() > max_bytes_))
        erase(std::prev(lru_.end()));
    lru_.push_front({key, {answer.begin(), answer.end()}, now_ns, *seconds});
    index_[key] = lru_.begin();
    bytes_ += answer.size();
    return true;
}

std::optional<std::vector<uint8_t>> AnswerCache::lookup(const std::string& key, uint64_t now_ns)
{
    auto it = index_.find(key);
    if (it == index_.end())
        return std::nullopt;
    const Entry& entry = *it->second;
    uint64_t kept_ns = now_ns > entry.stored_ns ? now_ns - entry.stored_ns : 0;
    uint64_t kept = (kept_ns + 999999999) / 1000000000; // rounded up
    if (kept >= entry.seconds) {
        erase(it->second);
        return std::nullopt;
    }
    lru_.splice(lru_.begin(), lru_, it->second);
    std::vector<uint8_t> message = entry.message;
    age_ttls(message, static_cast<uint32_t>(kept));
    return message;
}

void AnswerCache::forget_upstream(const std::string& upstream)
{
    std::string prefix = upstream + '\0';
    for (auto it = lru_.begin(); it != lru_.end();) {
        auto next = std::next(it);
        if (it->key.starts_with(prefix))
            erase(it);
        it = next;
    }
}

void AnswerCache::erase(Lru::iterator it)
{
    bytes_ -= it->message.size();
    index_.erase(it->key);
    lru_.erase(it);
}

} // namespace cerberus::dns
