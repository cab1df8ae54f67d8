// SPDX-License-Identifier: Apache-2.0
#include "audit/landlock_records.hpp"

#include "audit/audit_format.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

namespace cerberus::audit {
namespace {

// Fields the kernel writes with audit_log_untrustedstring: quoted, or hex
// when the value holds a space, a quote or a control character.
bool untrusted_string(std::string_view key)
{
    return key == "path" || key == "comm" || key == "exe" || key == "ocomm" || key == "dev" || key == "name" ||
           key == "cwd";
}

std::optional<std::string> from_hex(std::string_view text)
{
    if (text.empty() || text.size() % 2)
        return std::nullopt;
    std::string out;
    for (size_t i = 0; i < text.size(); i += 2) {
        unsigned value = 0;
        auto [end, ec] = std::from_chars(text.data() + i, text.data() + i + 2, value, 16);
        if (ec != std::errc() || end != text.data() + i + 2)
            return std::nullopt;
        out.push_back(static_cast<char>(value));
    }
    return out;
}

template <typename T> std::optional<T> number(std::string_view text, int base = 10)
{
    T value{};
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return value;
}

std::string field(const AuditRecord& record, const char* key)
{
    auto it = record.fields.find(key);
    return it == record.fields.end() ? "" : it->second;
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

std::optional<AuditRecord> parse_audit_record(uint16_t type, std::string_view text)
{
    // audit(<seconds>.<milliseconds>:<serial>):
    constexpr std::string_view prefix = "audit(";
    if (text.substr(0, prefix.size()) != prefix)
        return std::nullopt;
    size_t dot = text.find('.', prefix.size());
    size_t colon = text.find(':', prefix.size());
    size_t close = text.find("):", prefix.size());
    if (dot == std::string_view::npos || colon == std::string_view::npos || close == std::string_view::npos ||
        !(dot < colon && colon < close))
        return std::nullopt;
    auto seconds = number<int64_t>(text.substr(prefix.size(), dot - prefix.size()));
    auto millis = number<int64_t>(text.substr(dot + 1, colon - dot - 1));
    auto serial = number<uint64_t>(text.substr(colon + 1, close - colon - 1));
    if (!seconds || !millis || !serial || *seconds < 0 || *seconds > INT64_MAX / 1000000000 - 1 || *millis < 0 ||
        *millis > 999)
        return std::nullopt;
    AuditRecord record;
    record.type = type;
    record.wall_ns = *seconds * 1000000000 + *millis * 1000000;
    record.serial = *serial;
    std::string_view rest = text.substr(close + 2);
    while (!rest.empty()) {
        size_t start = rest.find_first_not_of(' ');
        if (start == std::string_view::npos)
            break;
        rest.remove_prefix(start);
        size_t equals = rest.find('=');
        size_t space = rest.find(' ');
        if (equals == std::string_view::npos || (space != std::string_view::npos && space < equals)) {
            rest.remove_prefix(space == std::string_view::npos ? rest.size() : space); // a word without a value
            continue;
        }
        std::string key(rest.substr(0, equals));
        rest.remove_prefix(equals + 1);
        std::string value;
        if (!rest.empty() && rest.front() == '"') {
            size_t end = rest.find('"', 1);
            if (end == std::string_view::npos)
                end = rest.size();
            value = std::string(rest.substr(1, end - 1));
            rest.remove_prefix(std::min(end + 1, rest.size()));
        } else {
            size_t end = rest.find(' ');
            std::string_view raw = rest.substr(0, end);
            rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
            auto decoded = untrusted_string(key) ? from_hex(raw) : std::nullopt;
            value = decoded ? *decoded : std::string(raw);
        }
        record.fields.emplace(std::move(key), std::move(value)); // the first of a repeated key counts
    }
    return record;
}

std::optional<std::pair<uint64_t, int64_t>> LandlockEvents::add(const AuditRecord& record)
{
    Pending& pending = pending_[record.serial];
    LandlockEvent& event = pending.event;
    event.serial = record.serial;
    event.wall_ns = record.wall_ns;
    switch (record.type) {
    case landlock_access_record: {
        auto domain = number<uint64_t>(field(record, "domain"), 16);
        if (!domain)
            return std::nullopt;
        pending.landlock = true;
        event.denials.push_back({*domain, field(record, "blockers"), field(record, "path"), field(record, "opid")});
        return std::nullopt;
    }
    case landlock_domain_record: {
        auto domain = number<uint64_t>(field(record, "domain"), 16);
        auto pid = number<int64_t>(field(record, "pid"));
        if (!domain || !pid || field(record, "status") != "allocated")
            return std::nullopt;
        pending.landlock = true;
        return std::pair{*domain, *pid};
    }
    case audit_syscall_record: {
        event.pid = number<int64_t>(field(record, "pid")).value_or(0);
        event.uid = number<int64_t>(field(record, "uid")).value_or(-1);
        event.gid = number<int64_t>(field(record, "gid")).value_or(-1);
        event.comm = field(record, "comm");
        event.exe = field(record, "exe");
        auto exit = number<int64_t>(field(record, "exit"));
        event.err = exit && *exit < 0 && *exit > -4096 ? static_cast<int>(-*exit) : 0;
        return std::nullopt;
    }
    case audit_end_of_event:
        pending.ended = true;
        return std::nullopt;
    }
    return std::nullopt;
}

std::vector<LandlockEvent> LandlockEvents::take(bool everything)
{
    return take_if(everything, false);
}

std::vector<LandlockEvent> LandlockEvents::take_stale()
{
    return take_if(false, true);
}

std::vector<LandlockEvent> LandlockEvents::take_if(bool everything, bool stale_too)
{
    std::vector<LandlockEvent> complete;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (!everything && !it->second.ended && !(stale_too && it->second.stale)) {
            it->second.stale = it->second.stale || stale_too;
            ++it;
            continue;
        }
        if (it->second.landlock)
            complete.push_back(std::move(it->second.event));
        it = pending_.erase(it);
    }
    return complete;
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
