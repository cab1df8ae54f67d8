// SPDX-License-Identifier: Apache-2.0
// The kernel audit subsystem as far as the runtime uses it: whether it is
// enabled (Landlock logs denials only through it), and a read-only
// subscription to its log (the NETLINK_AUDIT readlog multicast group, which
// needs CAP_AUDIT_READ and leaves the audit daemon's unicast port alone).
#pragma once

#include "base/fd.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace cerberus::kernel {

struct AuditStatus {
    bool known = false;   // false: the kernel would not say (no CONFIG_AUDIT, no CAP_AUDIT_CONTROL...)
    uint32_t enabled = 0; // 0 off, 1 on, 2 on and locked
    std::string why_unknown;
};

// AUDIT_GET on a NETLINK_AUDIT socket of its own. Never throws.
AuditStatus audit_status();

// A NETLINK_AUDIT socket bound to the readlog group, non-blocking. Throws.
UniqueFd subscribe_audit_log();

struct AuditMessage {
    uint16_t type = 0; // AUDIT_* record type
    std::string text;  // "audit(1729738800.268:30): domain=..."
};

// Every message queued on the subscription; lost counts the records the
// kernel dropped because the socket's buffer was full (ENOBUFS).
std::vector<AuditMessage> read_audit_messages(int fd, uint64_t& lost);

// The type of a marker's record: libaudit's AUDIT_TRUSTED_APP (free text
// from a trusted program), one of the user types the kernel passes on.
inline constexpr uint16_t audit_marker_record = 1121;
inline constexpr uint16_t netlink_error = 2; // NLMSG_ERROR: the kernel refused a request

// Sends text from fd as a user record (needs CAP_AUDIT_WRITE). The kernel
// queues it behind every record already queued and multicasts its log in
// order, so a subscriber that reads the marker back has read every record
// made before the send. With audit off the kernel drops it (Landlock, too,
// logs nothing then); a refusal comes back on fd as a netlink_error message.
void send_audit_marker(int fd, const std::string& text);

} // namespace cerberus::kernel
