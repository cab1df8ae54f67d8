// SPDX-License-Identifier: Apache-2.0
// The DNS gate's reading of messages, through glibc's libresolv (never a
// parser of our own): a query's question, an answer's addresses with their
// TTLs, and the REFUSED reply the gate gives for a name the policy does not
// allow, and the replies of the gate's own for queries it does not forward.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cerberus::dns {

using Address = std::array<uint8_t, 16>; // IPv6, IPv4 as ::ffff:a.b.c.d

struct Question {
    std::string name; // lower case, no trailing dot
    uint16_t type = 0;
    uint16_t klass = 0;
    bool operator==(const Question&) const = default;
};

// A query with exactly one question; nullopt for anything else (an answer,
// a malformed message).
struct Query {
    uint16_t id = 0;
    Question question;
};
std::optional<Query> parse_query(std::span<const uint8_t> message);

struct AddressRecord {
    Address address;
    uint32_t ttl = 0;
    bool operator==(const AddressRecord&) const = default;
};

// An answer: its rcode, truncation, question, and the A and AAAA records of
// the answer section whose owner is the question's name or a name the
// CNAME chain from it leads to. nullopt when the message is no answer.
struct Answer {
    uint16_t id = 0;
    int rcode = 0;
    bool truncated = false;
    Question question;
    std::vector<AddressRecord> addresses;
};
std::optional<Answer> parse_answer(std::span<const uint8_t> message);

// The reply with rcode (ns_r_refused: a name the policy does not allow, or a
// container over its query rate; ns_r_servfail: over its queries in flight)
// to a query: its id and question, no records. Empty when the query has no
// readable header and question.
std::vector<uint8_t> error_reply(std::span<const uint8_t> query, int rcode);
inline std::vector<uint8_t> refused_reply(std::span<const uint8_t> query)
{
    return error_reply(query, 5); // ns_r_refused, without <arpa/nameser.h> in every includer
}

// The FORMERR reply (RFC 1035 4.1.1) to a message whose question cannot be
// read: its id and opcode, no question. Empty for fewer bytes than a header,
// and for a message that is itself a reply (never answered: two gates, or a
// gate and a forged peer, would answer each other forever).
std::vector<uint8_t> formerr_reply(std::span<const uint8_t> message);

// "A", "AAAA", "MX"..., "TYPE65" for a type libresolv has no name for.
std::string type_name(uint16_t type);

// The message with its id replaced (the gate's own ids upstream).
void set_id(std::span<uint8_t> message, uint16_t id);

} // namespace cerberus::dns
