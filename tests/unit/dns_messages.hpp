// SPDX-License-Identifier: Apache-2.0
// DNS messages for the gate's unit tests: queries made by res_mkquery and
// answers assembled by hand, names written label by label.
#pragma once

#include "dns/dns_answers.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <resolv.h>

#include <cstdint>
#include <string>
#include <vector>

inline std::vector<uint8_t> make_query(const char* name, int type, uint16_t id = 0)
{
    std::vector<uint8_t> buf(512);
    int n = res_mkquery(ns_o_query, name, ns_c_in, type, nullptr, 0, nullptr, buf.data(), static_cast<int>(buf.size()));
    REQUIRE(n > 0);
    buf.resize(static_cast<size_t>(n));
    if (id)
        cerberus::dns::set_id(buf, id);
    return buf;
}

// A hand-assembled answer, names written label by label.
struct AnswerBuilder {
    std::vector<uint8_t> bytes;
    uint16_t ancount = 0;
    uint16_t nscount = 0;

    AnswerBuilder(uint16_t id, const std::string& question, uint16_t qtype, int rcode = 0)
    {
        bytes = {uint8_t(id >> 8), uint8_t(id), 0x81, uint8_t(0x80 | rcode), 0, 1, 0, 0, 0, 0, 0, 0};
        name(question);
        u16(qtype);
        u16(ns_c_in);
    }
    void u16(uint16_t v) { bytes.insert(bytes.end(), {uint8_t(v >> 8), uint8_t(v)}); }
    void u32(uint32_t v)
    {
        u16(uint16_t(v >> 16));
        u16(uint16_t(v));
    }
    void name(const std::string& text)
    {
        size_t at = 0;
        while (at < text.size()) {
            size_t dot = text.find('.', at);
            if (dot == std::string::npos)
                dot = text.size();
            bytes.push_back(uint8_t(dot - at));
            bytes.insert(bytes.end(), text.begin() + long(at), text.begin() + long(dot));
            at = dot + 1;
        }
        bytes.push_back(0);
    }
    // A record's header in the answer section, or (authority) the authority section, after every answer.
    void record_header(const std::string& owner, uint16_t type, uint32_t ttl, bool owner_is_question,
                       bool authority = false)
    {
        if (owner_is_question)
            u16(0xc00c); // a compression pointer to the question's name
        else
            name(owner);
        u16(type);
        u16(ns_c_in);
        u32(ttl);
        uint16_t& count = authority ? nscount : ancount;
        size_t at = authority ? 8 : 6;
        ++count;
        bytes[at] = uint8_t(count >> 8);
        bytes[at + 1] = uint8_t(count);
    }
    // The zone's SOA in the authority section, as a negative answer carries it (RFC 2308 3).
    void soa(const std::string& zone, uint32_t ttl, uint32_t minimum)
    {
        record_header(zone, ns_t_soa, ttl, false, true);
        size_t len_at = bytes.size();
        u16(0);
        size_t start = bytes.size();
        name("ns." + zone);
        name("hostmaster." + zone);
        for (uint32_t field : {1u, 7200u, 900u, 1209600u, minimum}) // serial, refresh, retry, expire, minimum
            u32(field);
        bytes[len_at] = uint8_t((bytes.size() - start) >> 8);
        bytes[len_at + 1] = uint8_t(bytes.size() - start);
    }
    void cname(const std::string& owner, const std::string& target, uint32_t ttl, bool owner_is_question)
    {
        record_header(owner, ns_t_cname, ttl, owner_is_question);
        size_t len_at = bytes.size();
        u16(0);
        size_t start = bytes.size();
        name(target);
        bytes[len_at] = uint8_t((bytes.size() - start) >> 8);
        bytes[len_at + 1] = uint8_t(bytes.size() - start);
    }
    // An A record for an IPv4 address, AAAA for an IPv6 one.
    void address(const std::string& owner, int family, const char* text, uint32_t ttl)
    {
        record_header(owner, family == AF_INET ? ns_t_a : ns_t_aaaa, ttl, false);
        uint16_t len = family == AF_INET ? 4 : 16;
        u16(len);
        uint8_t raw[16];
        REQUIRE(inet_pton(family, text, raw) == 1);
        bytes.insert(bytes.end(), raw, raw + len);
    }
};
