// SPDX-License-Identifier: Apache-2.0
// Landlock's denials as the kernel audit log carries them (ABI 7): an
// AUDIT_LANDLOCK_ACCESS record per denial (domain id, blockers, the object),
// an AUDIT_LANDLOCK_DOMAIN record the first time a domain shows (who created
// it: the container process that applied it), and, where the kernel builds
// one, the SYSCALL record of the same event naming the process. Records of
// one event share a serial. Pure: parsing, grouping and the trail line.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::audit {

inline constexpr uint16_t audit_syscall_record = 1300;   // AUDIT_SYSCALL
inline constexpr uint16_t audit_end_of_event = 1320;     // AUDIT_EOE
inline constexpr uint16_t landlock_access_record = 1423; // AUDIT_LANDLOCK_ACCESS
inline constexpr uint16_t landlock_domain_record = 1424; // AUDIT_LANDLOCK_DOMAIN

struct AuditRecord {
    uint16_t type = 0;
    int64_t wall_ns = 0; // the event's time, as the kernel stamped it (millisecond precision)
    uint64_t serial = 0;
    std::map<std::string, std::string> fields; // quoted and hex-encoded values decoded
};

// "audit(1729738800.268:30): key=value ..."; nullopt when the text has no stamp.
std::optional<AuditRecord> parse_audit_record(uint16_t type, std::string_view text);

struct LandlockDenial {
    uint64_t domain = 0;
    std::string blockers; // "fs.read_file", "fs.make_reg,fs.refer"...
    std::string path;     // as the denied process sees it; empty for objects without one
    std::string opid;     // a signal's target
};

// One audit event that holds Landlock records.
struct LandlockEvent {
    int64_t wall_ns = 0;
    uint64_t serial = 0;
    std::vector<LandlockDenial> denials;
    // From the SYSCALL record, when there is one.
    int64_t pid = 0;
    std::string comm, exe;
    int64_t uid = -1, gid = -1;
    int err = 0; // from its exit=, 0 when unknown
};

// Groups records into events by serial. Records of events without Landlock
// records are dropped.
class LandlockEvents {
public:
    // Returns a domain's allocation (domain id, creator pid) as soon as it
    // comes: the creator should be looked at while it still runs.
    std::optional<std::pair<uint64_t, int64_t>> add(const AuditRecord& record);
    // Events that are complete: ended (AUDIT_EOE) or, with everything = true,
    // all of them (where the kernel builds no SYSCALL record it sends no end).
    std::vector<LandlockEvent> take(bool everything);
    // Events already open at the last call; the others are marked.
    std::vector<LandlockEvent> take_stale();

private:
    struct Pending {
        LandlockEvent event;
        bool ended = false;
        bool landlock = false;
        bool stale = false;
    };
    std::vector<LandlockEvent> take_if(bool everything, bool stale_too);
    std::map<uint64_t, Pending> pending_;
};

// The trail line of one denial: the fields of a BPF denial (event_json);
// pid, tid, comm, exe, uid and gid where the kernel sent a SYSCALL record,
// else 0 / "" / -1. "blockers" says which Landlock rights were missing.
nlohmann::ordered_json landlock_denial_json(const LandlockEvent& event, const LandlockDenial& denial,
                                            const std::string& container_id);

} // namespace cerberus::audit
