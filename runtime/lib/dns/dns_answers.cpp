// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_answers.hpp"

#include "base/text.hpp"

#include <arpa/nameser.h>

#include <algorithm>
#include <cstring>

namespace cerberus::dns {
namespace {

constexpr size_t header_size = NS_HFIXEDSZ;

std::optional<Question> first_question(ns_msg& handle)
{
    if (ns_msg_count(handle, ns_s_qd) != 1)
        return std::nullopt;
    ns_rr rr{};
    if (ns_parserr(&handle, ns_s_qd, 0, &rr) < 0)
        return std::nullopt;
    return Question{canonical_host_name(ns_rr_name(rr)), static_cast<uint16_t>(ns_rr_type(rr)), static_cast<uint16_t>(ns_rr_class(rr))};
}

// The name a CNAME record points to, uncompressed.
std::optional<std::string> cname_target(const ns_msg& handle, const ns_rr& rr)
{
    char target[NS_MAXDNAME];
    if (ns_name_uncompress(ns_msg_base(handle), ns_msg_end(handle), ns_rr_rdata(rr), target, sizeof(target)) < 0)
        return std::nullopt;
    return canonical_host_name(target);
}

} // namespace

std::optional<Query> parse_query(std::span<const uint8_t> message)
{
    ns_msg handle{};
    if (ns_initparse(message.data(), static_cast<int>(message.size()), &handle) < 0)
        return std::nullopt;
    if (ns_msg_getflag(handle, ns_f_qr) != 0 || ns_msg_getflag(handle, ns_f_opcode) != ns_o_query)
        return std::nullopt;
    auto question = first_question(handle);
    if (!question)
        return std::nullopt;
    return Query{static_cast<uint16_t>(ns_msg_id(handle)), *question};
}

std::optional<Answer> parse_answer(std::span<const uint8_t> message)
{
    ns_msg handle{};
    if (ns_initparse(message.data(), static_cast<int>(message.size()), &handle) < 0)
        return std::nullopt;
    if (ns_msg_getflag(handle, ns_f_qr) == 0)
        return std::nullopt;
    auto question = first_question(handle);
    if (!question)
        return std::nullopt;
    Answer answer{static_cast<uint16_t>(ns_msg_id(handle)), ns_msg_getflag(handle, ns_f_rcode), ns_msg_getflag(handle, ns_f_tc) != 0,
                  *question, {}};
    // The owners an address may have: the question, and the chain of CNAMEs
    // from it (in any order in the section, as resolvers may send them).
    std::vector<std::string> owners{question->name};
    std::vector<std::pair<std::string, std::string>> cnames;
    std::vector<std::pair<std::string, AddressRecord>> records;
    int count = ns_msg_count(handle, ns_s_an);
    for (int i = 0; i < count; ++i) {
        ns_rr rr{};
        if (ns_parserr(&handle, ns_s_an, i, &rr) < 0)
            return std::nullopt;
        if (ns_rr_class(rr) != ns_c_in)
            continue;
        std::string owner = canonical_host_name(ns_rr_name(rr));
        if (ns_rr_type(rr) == ns_t_cname) {
            if (auto target = cname_target(handle, rr))
                cnames.emplace_back(owner, *target);
        } else if (ns_rr_type(rr) == ns_t_a && ns_rr_rdlen(rr) == 4) {
            AddressRecord record{{}, ns_rr_ttl(rr)};
            record.address[10] = record.address[11] = 0xff;
            std::memcpy(record.address.data() + 12, ns_rr_rdata(rr), 4);
            records.emplace_back(owner, record);
        } else if (ns_rr_type(rr) == ns_t_aaaa && ns_rr_rdlen(rr) == 16) {
            AddressRecord record{{}, ns_rr_ttl(rr)};
            std::memcpy(record.address.data(), ns_rr_rdata(rr), 16);
            records.emplace_back(owner, record);
        }
    }
    for (bool grew = true; grew;) { // bounded: each pass adds an owner or stops
        grew = false;
        for (const auto& [from, to] : cnames)
            if (std::count(owners.begin(), owners.end(), from) && !std::count(owners.begin(), owners.end(), to)) {
                owners.push_back(to);
                grew = true;
            }
    }
    for (const auto& [owner, record] : records)
        if (std::count(owners.begin(), owners.end(), owner))
            answer.addresses.push_back(record);
    return answer;
}

std::vector<uint8_t> error_reply(std::span<const uint8_t> query, int rcode)
{
    ns_msg handle{};
    ns_rr question{};
    if (query.size() < header_size || ns_initparse(query.data(), static_cast<int>(query.size()), &handle) < 0 ||
        ns_msg_count(handle, ns_s_qd) < 1 || ns_parserr(&handle, ns_s_qd, 0, &question) < 0)
        return {};
    // The question written anew from its name, never copied: the query's bytes may point (name compression)
    // into parts the reply changes or leaves out.
    std::vector<uint8_t> reply(header_size + NS_MAXCDNAME + 2 * NS_INT16SZ);
    int name_size = ns_name_compress(ns_rr_name(question), reply.data() + header_size, NS_MAXCDNAME, nullptr, nullptr);
    if (name_size < 0)
        return {};
    reply.resize(header_size + name_size + 2 * NS_INT16SZ);
    std::memcpy(reply.data(), query.data(), 2); // the id
    reply[2] = static_cast<uint8_t>(0x80 | (query[2] & 0x79)); // QR, the query's opcode and RD; no AA, no TC
    reply[3] = static_cast<uint8_t>(0x80 | (rcode & 0x0f)); // RA, rcode
    const uint8_t counts[8] = {0, 1, 0, 0, 0, 0, 0, 0}; // one question, no records
    std::memcpy(reply.data() + 4, counts, sizeof(counts));
    uint8_t* type_and_class = reply.data() + header_size + name_size;
    NS_PUT16(ns_rr_type(question), type_and_class);
    NS_PUT16(ns_rr_class(question), type_and_class);
    return reply;
}

std::vector<uint8_t> formerr_reply(std::span<const uint8_t> message)
{
    if (message.size() < header_size || (message[2] & 0x80) != 0)
        return {};
    std::vector<uint8_t> reply(header_size, 0); // no question: it could not be read
    std::memcpy(reply.data(), message.data(), 2); // the id
    reply[2] = static_cast<uint8_t>(0x80 | (message[2] & 0x79)); // QR, the opcode and RD
    reply[3] = 0x80 | ns_r_formerr;
    return reply;
}

std::string type_name(uint16_t type)
{
    // The types agents ask for; libresolv's p_type is deprecated.
    static const std::pair<uint16_t, const char*> names[] = {
        {ns_t_a, "A"},     {ns_t_ns, "NS"},   {ns_t_cname, "CNAME"}, {ns_t_soa, "SOA"}, {ns_t_ptr, "PTR"},
        {ns_t_mx, "MX"},   {ns_t_txt, "TXT"}, {ns_t_aaaa, "AAAA"},   {ns_t_srv, "SRV"}, {64, "SVCB"},
        {65, "HTTPS"},     {ns_t_any, "ANY"}, {ns_t_caa, "CAA"},
    };
    for (const auto& [number, name] : names)
        if (number == type)
            return name;
    return "TYPE" + std::to_string(type);
}

void set_id(std::span<uint8_t> message, uint16_t id)
{
    if (message.size() >= 2) {
        message[0] = static_cast<uint8_t>(id >> 8);
        message[1] = static_cast<uint8_t>(id);
    }
}

} // namespace cerberus::dns
