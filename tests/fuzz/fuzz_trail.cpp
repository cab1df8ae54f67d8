// SPDX-License-Identifier: Apache-2.0
// The audit trail: any event the ring buffer could hold becomes one line of
// valid JSON, and that line, or any other text, one line of text.
#include "audit/audit_format.hpp"
#include "reference_access.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>

using namespace cerberus::audit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::string text(reinterpret_cast<const char*>(data), size);
    text_line(text);
    if (size < sizeof(cerb_event))
        return 0;
    cerb_event e;
    std::memcpy(&e, data, sizeof(e));
    std::string tail(reinterpret_cast<const char*>(data) + sizeof(e), size - sizeof(e));
    int64_t offset = 0;
    std::memcpy(&offset, &e.tid, sizeof(e.tid)); // some bits that vary
    EventContext ctx{.container_id = tail, .exe = tail, .boot_to_wall_ns = offset * 1'000'000'000LL};
    std::string line = dump_line(event_json(e, ctx));
    if (line.find('\n') != std::string::npos)
        reference::fail("a trail record spans lines");
    if (nlohmann::json::parse(line, nullptr, false).is_discarded())
        reference::fail("a trail record is not JSON: " + line);
    text_line(line);
    dump_line(lost_json(tail, offset, e.cgroup_id, e.time_ns));
    return 0;
}
