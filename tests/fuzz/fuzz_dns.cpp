// SPDX-License-Identifier: Apache-2.0
// The DNS gate's reading of messages: what an agent sends as a query and what
// a nameserver sends back are anyone's bytes. A REFUSED reply, when a query
// gets one, must read back as an answer to the same question with rcode 5 and
// no address; an answer's addresses must be A or AAAA sized.
#include "dns/dns_answers.hpp"
#include "reference_access.hpp"

#include <arpa/nameser.h>

#include <cstddef>
#include <cstdint>

using namespace cerberus::dns;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::span<const uint8_t> message(data, size);
    if (auto query = parse_query(message)) {
        std::vector<uint8_t> reply = refused_reply(message);
        auto answer = parse_answer(reply);
        if (!reply.empty() && !answer)
            reference::fail("the REFUSED reply to a parsable query does not read as an answer");
        if (answer &&
            (answer->rcode != ns_r_refused || answer->id != query->id || !(answer->question == query->question) ||
             !answer->addresses.empty()))
            reference::fail("the REFUSED reply does not answer the query's question with rcode 5 alone");
        type_name(query->question.type);
    }
    if (auto answer = parse_answer(message)) {
        for (const auto& record : answer->addresses)
            if (record.address.size() != 16)
                reference::fail("an address that is not 16 bytes");
        std::vector<uint8_t> copy(data, data + size);
        set_id(copy, 0x1234);
    }
    return 0;
}
