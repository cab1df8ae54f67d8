// SPDX-License-Identifier: Apache-2.0
#include "audit/landlock_records.hpp"

#include "audit/audit_format.hpp"
#include "base/error.hpp"
#include "base/numbers.hpp"

#include <auparse.h>
#include <libaudit.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

namespace cerberus::audit {
namespace {

std::string value_of(const std::map<std::string, std::string>& fields, const char* name)
{
    auto it = fields.find(name);
    return it == fields.end() ? "" : it->second;
}

struct AuparseFree {
    void operator()(auparse_state_t* au) const { auparse_destroy(au); }
};
using Auparse = std::unique_ptr<auparse_state_t, AuparseFree>;

// auparse_init reads auditd.conf and sets the process-wide end-of-event
// timeout from it: set again after each.
Auparse open_auparse(ausource_t source, const void* arg)
{
    Auparse au(auparse_init(source, arg));
    if (!au)
        throw_errno("starting libauparse");
    auparse_set_eoe_timeout(end_of_event);
    auparse_set_escape_mode(au.get(), AUPARSE_ESC_RAW); // the trail's JSON escapes what needs it
    return au;
}

// The current record's fields, those libauparse knows as escaped (path,
// comm, exe: quoted, or hex-encoded when they hold a space, a quote or a
// control character) decoded. The first of a repeated name counts.
std::map<std::string, std::string> record_fields(auparse_state_t* au)
{
    std::map<std::string, std::string> fields;
    if (auparse_first_field(au) <= 0)
        return fields;
    do {
        const char* name = auparse_get_field_name(au);
        const char* value = auparse_get_field_type(au) == AUPARSE_TYPE_ESCAPED ? auparse_interpret_field(au)
                                                                                : auparse_get_field_str(au);
        if (name && value)
            fields.emplace(name, value);
    } while (auparse_next_field(au) > 0);
    return fields;
}

struct Meaning {
    const char* op;
    const char* rule;
};

// Whether any missing right is a write: an open for reading and writing lacks
// fs.read_file first, yet needs allowed_paths (learn mode reads this).
bool asks_write(std::string_view blockers)
{
    for (size_t start = 0; start <= blockers.size();) {
        size_t end = std::min(blockers.find(',', start), blockers.size());
        std::string_view right = blockers.substr(start, end - start);
        if (right == "fs.write_file" || right == "fs.truncate")
            return true;
        start = end + 1;
    }
    return false;
}

// What the first missing right means in the policy's words.
Meaning meaning_of(std::string_view blockers)
{
    std::string_view first = blockers.substr(0, blockers.find(','));
    auto starts = [&](std::string_view prefix) { return first.substr(0, prefix.size()) == prefix; };
    if (first == "fs.execute")
        return {"exec", "not in allowed_bins"};
    if (first == "fs.read_file" || first == "fs.read_dir")
        return {"open", "not in allowed_paths or read_only_paths"};
    if (first == "fs.write_file" || first == "fs.truncate")
        return {"open", "not in allowed_paths"};
    if (first == "fs.ioctl_dev")
        return {"ioctl", "not in allowed_paths"};
    if (starts("fs.make_"))
        return {"create", "not in allowed_paths"};
    if (starts("fs.remove_"))
        return {"unlink", "not in allowed_paths"};
    if (first == "fs.refer")
        return {"rename", "not in allowed_paths"};
    if (first == "fs.change_topology")
        return {"mount", "escalation is shut under a policy"};
    if (first == "ptrace")
        return {"ptrace", "landlock ptrace scope"};
    if (first == "scope.signal")
        return {"signal", "landlock signal scope"};
    if (first == "scope.abstract_unix_socket")
        return {"connect", "landlock abstract unix socket scope"};
    if (starts("net.bind"))
        return {"bind", "landlock network rule"};
    if (starts("net."))
        return {"connect", "landlock network rule"};
    return {"landlock", "landlock"};
}

} // namespace

struct LandlockRecords::Feed {
    Auparse auparse;
    std::vector<LandlockEvent> ready;
};

namespace {

void on_event(auparse_state_t* au, auparse_cb_event_t what, void* user)
{
    auto* ready = static_cast<std::vector<LandlockEvent>*>(user);
    time_t seconds = auparse_get_time(au);
    if (what != AUPARSE_CB_EVENT_READY || auparse_first_record(au) <= 0 || seconds < 0 ||
        seconds > INT64_MAX / 1000000000 - 1)
        return;
    LandlockEvent event;
    event.wall_ns = static_cast<int64_t>(seconds) * 1000000000 + int64_t{auparse_get_milli(au)} * 1000000;
    event.serial = auparse_get_serial(au);
    do {
        int type = auparse_get_type(au);
        if (type == landlock_access_record) {
            auto fields = record_fields(au);
            if (auto domain = parse_whole<uint64_t>(value_of(fields, "domain"), 16))
                event.denials.push_back(
                    {*domain, value_of(fields, "blockers"), value_of(fields, "path"), value_of(fields, "opid")});
        } else if (type == audit_syscall_record) {
            auto fields = record_fields(au);
            event.pid = parse_whole<int64_t>(value_of(fields, "pid")).value_or(0);
            event.uid = parse_whole<int64_t>(value_of(fields, "uid")).value_or(-1);
            event.gid = parse_whole<int64_t>(value_of(fields, "gid")).value_or(-1);
            event.comm = value_of(fields, "comm");
            event.exe = value_of(fields, "exe");
            auto exit = parse_whole<int64_t>(value_of(fields, "exit"));
            event.err = exit && *exit < 0 && *exit > -4096 ? static_cast<int>(-*exit) : 0;
        }
    } while (auparse_next_record(au) > 0);
    if (!event.denials.empty())
        ready->push_back(std::move(event));
}

// The domain record alone, read as soon as it comes (LandlockRecords::add).
std::optional<DomainAllocation> domain_allocation(const std::string& line)
{
    Auparse au = open_auparse(AUSOURCE_BUFFER, line.c_str());
    if (auparse_next_event(au.get()) <= 0 || auparse_get_type(au.get()) != landlock_domain_record)
        return std::nullopt;
    auto fields = record_fields(au.get());
    auto domain = parse_whole<uint64_t>(value_of(fields, "domain"), 16);
    auto pid = parse_whole<int64_t>(value_of(fields, "pid"));
    if (!domain || !pid || value_of(fields, "status") != "allocated")
        return std::nullopt;
    return DomainAllocation{*domain, *pid};
}

} // namespace

LandlockRecords::LandlockRecords() : feed_(std::make_unique<Feed>())
{
    feed_->auparse = open_auparse(AUSOURCE_FEED, nullptr);
    auparse_add_callback(feed_->auparse.get(), on_event, &feed_->ready, nullptr);
}

LandlockRecords::~LandlockRecords() = default;

std::optional<DomainAllocation> LandlockRecords::add(uint16_t type, std::string_view text)
{
    // Only what names or ends a Landlock event: the rest of a busy audit log is never parsed.
    if (type != landlock_access_record && type != landlock_domain_record && type != audit_syscall_record &&
        type != audit_end_of_event)
        return std::nullopt;
    std::string line = audit_log_line(type, text);
    auto allocated = type == landlock_domain_record ? domain_allocation(line) : std::nullopt;
    auparse_feed(feed_->auparse.get(), line.data(), line.size());
    return allocated;
}

std::vector<LandlockEvent> LandlockRecords::take(Completion completion)
{
    // libauparse marks an event complete as it reads its last record, and
    // hands it over at the next read: a read of nothing, then.
    if (auparse_feed_has_ready_event(feed_->auparse.get()))
        auparse_feed(feed_->auparse.get(), "", 0);
    if (completion == Completion::aged)
        auparse_feed_age_events(feed_->auparse.get());
    else if (completion == Completion::all)
        auparse_flush_feed(feed_->auparse.get());
    return std::exchange(feed_->ready, {});
}

std::string audit_log_line(uint16_t type, std::string_view text)
{
    const char* name = audit_msg_type_to_name(type); // NULL for types libaudit does not know yet, as auditd writes them
    std::string line = "type=";
    line += name ? name : "UNKNOWN[" + std::to_string(type) + "]";
    line += " msg=";
    line += text.substr(0, text.find('\n')); // one record, one line: nothing in its text can make another
    line += '\n';
    return line;
}

nlohmann::ordered_json landlock_denial_json(const LandlockEvent& event, const LandlockDenial& denial,
                                            const std::string& container_id)
{
    Meaning meaning = meaning_of(denial.blockers);
    int err = event.err ? event.err : EACCES; // what Landlock returns for what it denies
    const char* error = strerrorname_np(err);
    nlohmann::ordered_json j;
    j["type"] = "denial";
    j["time"] = rfc3339_ns(event.wall_ns);
    j["id"] = container_id;
    j["pid"] = event.pid;
    j["tid"] = event.pid; // the SYSCALL record names the thread group only
    j["comm"] = event.comm;
    j["exe"] = event.exe;
    j["uid"] = event.uid;
    j["gid"] = event.gid;
    j["op"] = meaning.op;
    j["target"] = !denial.path.empty() ? denial.path : !denial.opid.empty() ? "pid=" + denial.opid : "";
    if (std::string_view(meaning.op) == "open")
        j["access"] = asks_write(denial.blockers) ? "write" : "read"; // as the BPF LSM's records say
    j["verdict"] = "denied";
    j["errno"] = err;
    j["error"] = error ? error : "errno " + std::to_string(err);
    j["rule"] = meaning.rule;
    j["blockers"] = denial.blockers;
    return j;
}

} // namespace cerberus::audit
