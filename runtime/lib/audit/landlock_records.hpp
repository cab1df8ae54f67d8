// SPDX-License-Identifier: Apache-2.0
// Landlock's denials as the kernel audit log carries them (ABI 7): an
// AUDIT_LANDLOCK_ACCESS record per denial (domain id, blockers, the object),
// an AUDIT_LANDLOCK_DOMAIN record the first time a domain shows (who created
// it: the container process that applied it), and, where the kernel builds
// one, the SYSCALL record of the same event naming the process. Records of
// one event share a stamp; libauparse, fed the records as auditd writes them
// to its log, reads them and groups them into events. Kernel-free: tests
// feed record text.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::audit {

inline constexpr uint16_t audit_syscall_record = 1300;   // AUDIT_SYSCALL
inline constexpr uint16_t audit_end_of_event = 1320;     // AUDIT_EOE
inline constexpr uint16_t landlock_access_record = 1423; // AUDIT_LANDLOCK_ACCESS
inline constexpr uint16_t landlock_domain_record = 1424; // AUDIT_LANDLOCK_DOMAIN

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

// A domain's first record: its id and the process that made it.
struct DomainAllocation {
    uint64_t domain = 0;
    int64_t creator = 0;
};

// Which events take() hands over.
enum class Completion {
    ended, // those the kernel ended (AUDIT_EOE)
    aged,  // and those stamped over end_of_event ago: where the kernel builds no SYSCALL record it sends no end
    all,   // every one, ended or not (a container's finish, after its last record)
};

inline constexpr time_t end_of_event = 1; // seconds, libauparse's end-of-event timeout

// The records of the kernel audit log, read and grouped by libauparse (its
// feed source). Records of events without Landlock records are dropped.
class LandlockRecords {
public:
    LandlockRecords();
    ~LandlockRecords();
    LandlockRecords(const LandlockRecords&) = delete;
    LandlockRecords& operator=(const LandlockRecords&) = delete;

    // Feeds one record as the kernel sent it: its type and its text,
    // "audit(1729738800.268:30): key=value ...". Returns a domain's
    // allocation as soon as its record comes, before its event is complete:
    // the creator should be looked at while it still runs.
    std::optional<DomainAllocation> add(uint16_t type, std::string_view text);
    std::vector<LandlockEvent> take(Completion completion);

private:
    struct Feed;
    std::unique_ptr<Feed> feed_;
};

// A record as auditd writes it to its log, one line: "type=NAME msg=TEXT\n".
std::string audit_log_line(uint16_t type, std::string_view text);

// The trail line of one denial: the fields of a BPF denial (event_json);
// pid, tid, comm, exe, uid and gid where the kernel sent a SYSCALL record,
// else 0 / "" / -1. "blockers" says which Landlock rights were missing.
nlohmann::ordered_json landlock_denial_json(const LandlockEvent& event, const LandlockDenial& denial,
                                            const std::string& container_id);

} // namespace cerberus::audit
