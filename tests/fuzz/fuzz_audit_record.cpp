// SPDX-License-Identifier: Apache-2.0
// Landlock's records from the kernel audit log: any text under any record
// type is read by libauparse or dropped, groups into events, and every denial
// becomes one line of valid JSON. Input: two bytes of record type, then
// records one a line.
#include "audit/audit_format.hpp"
#include "audit/landlock_records.hpp"
#include "reference_access.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace cerberus::audit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    if (size < 2)
        return 0;
    const uint16_t types[] = {landlock_access_record, landlock_domain_record, audit_syscall_record,
                              audit_end_of_event};
    std::string_view text(reinterpret_cast<const char*>(data) + 2, size - 2);
    LandlockRecords events;
    for (size_t at = 0, line = 0; at <= text.size(); ++line) {
        size_t end = text.find('\n', at);
        std::string_view record = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
        at = end == std::string_view::npos ? text.size() + 1 : end + 1;
        uint16_t type = types[(data[line % 2] >> (line % 4)) % 4];
        events.add(type, record);
        if (data[0] & 1)
            events.take(Completion::aged);
    }
    for (const auto& event : events.take(Completion::all))
        for (const auto& denial : event.denials) {
            std::string line = dump_line(landlock_denial_json(event, denial, "fuzz"));
            if (line.find('\n') != std::string::npos)
                reference::fail("a trail record spans lines");
            if (nlohmann::json::parse(line, nullptr, false).is_discarded())
                reference::fail("a trail record is not JSON: " + line);
            text_line(line);
        }
    return 0;
}
