// SPDX-License-Identifier: Apache-2.0
#include "audit/landlock_records.hpp"

#include <doctest/doctest.h>

using namespace cerberus::audit;

namespace {

AuditRecord parsed(uint16_t type, const std::string& text)
{
    auto record = parse_audit_record(type, text);
    REQUIRE(record.has_value());
    return *record;
}

} // namespace

TEST_CASE("an audit record's stamp and fields are read, quoted and hex-encoded values decoded")
{
    auto record = parsed(landlock_access_record, "audit(1729738800.268:34): domain=1a6fdc679 blockers=fs.write_file "
                                                 "path=\"/etc/passwd\" dev=\"vda2\" ino=143821");
    CHECK(record.serial == 34);
    CHECK(record.wall_ns == 1729738800268000000);
    CHECK(record.fields.at("domain") == "1a6fdc679");
    CHECK(record.fields.at("blockers") == "fs.write_file");
    CHECK(record.fields.at("path") == "/etc/passwd");
    CHECK(record.fields.at("ino") == "143821");
    // A path with a space comes hex-encoded; a number that looks like hex stays as it is.
    auto spaced = parsed(landlock_access_record, "audit(1.000:1): domain=a blockers=fs.read_file "
                                                 "path=2F746D702F6120622E747874 ino=1234");
    CHECK(spaced.fields.at("path") == "/tmp/a b.txt");
    CHECK(spaced.fields.at("ino") == "1234");
}

TEST_CASE("text that is not an audit record is refused")
{
    CHECK_FALSE(parse_audit_record(landlock_access_record, "").has_value());
    CHECK_FALSE(parse_audit_record(landlock_access_record, "domain=1 blockers=fs.execute").has_value());
    CHECK_FALSE(parse_audit_record(landlock_access_record, "audit(1.2:3 domain=1").has_value());
    CHECK_FALSE(parse_audit_record(landlock_access_record, "audit(x.000:3): domain=1").has_value());
    CHECK_FALSE(parse_audit_record(landlock_access_record, "audit(99999999999999999999.000:3): a=b").has_value());
    // Values cut short or keys without one are kept as far as they go.
    auto cut = parsed(landlock_access_record, "audit(1.000:1): lonely path=\"/unterminated");
    CHECK(cut.fields.at("path") == "/unterminated");
    CHECK(cut.fields.count("lonely") == 0);
}

TEST_CASE("records of one event are grouped by serial; the SYSCALL record names the process")
{
    LandlockEvents events;
    events.add(parsed(landlock_access_record,
                      "audit(100.500:7): domain=1a6fdc66f blockers=fs.execute path=\"/usr/bin/nc\" dev=\"sda\" ino=9"));
    auto allocated = events.add(parsed(landlock_domain_record, "audit(100.500:7): domain=1a6fdc66f status=allocated "
                                                               "mode=enforcing pid=286 uid=0 exe=\"/sbin/cerberus\" "
                                                               "comm=\"cerberus\""));
    REQUIRE(allocated.has_value());
    CHECK(allocated->first == 0x1a6fdc66f);
    CHECK(allocated->second == 286);
    CHECK_FALSE(events.add(parsed(landlock_domain_record, "audit(101.000:9): domain=1a6fdc66f status=deallocated "
                                                          "denials=3")));
    events.add(parsed(landlock_access_record,
                      "audit(100.600:8): domain=1a6fdc66f blockers=fs.read_file path=\"/secret\" dev=\"sda\" ino=3"));
    events.add(parsed(audit_syscall_record, "audit(100.500:7): arch=c000003e syscall=59 success=no exit=-13 "
                                            "ppid=1 pid=4242 auid=4294967295 uid=1000 gid=1000 comm=\"sh\" exe=\"/bin/sh\""));
    CHECK(events.take(false).empty()); // no end of event yet
    events.add(parsed(audit_end_of_event, "audit(100.500:7): "));
    auto done = events.take(false);
    REQUIRE(done.size() == 1);
    const auto& exec = done[0];
    CHECK(exec.serial == 7);
    REQUIRE(exec.denials.size() == 1);
    CHECK(exec.denials[0].domain == 0x1a6fdc66f);
    CHECK(exec.denials[0].path == "/usr/bin/nc");
    CHECK(exec.pid == 4242);
    CHECK(exec.comm == "sh");
    CHECK(exec.err == 13);

    auto line = landlock_denial_json(exec, exec.denials[0], "agent-1");
    CHECK(line["type"] == "denial");
    CHECK(line["id"] == "agent-1");
    CHECK(line["time"] == "1970-01-01T00:01:40.500000000Z");
    CHECK(line["op"] == "exec");
    CHECK(line["target"] == "/usr/bin/nc");
    CHECK(line["rule"] == "not in allowed_bins");
    CHECK(line["comm"] == "sh");
    CHECK(line["pid"] == 4242);
    CHECK(line["error"] == "EACCES");
    CHECK(line["verdict"] == "denied");

    // Where the kernel builds no SYSCALL record no end comes either: stale events are taken at the next tick.
    CHECK(events.take_stale().empty());
    auto read = events.take_stale();
    REQUIRE(read.size() == 1);
    CHECK(read[0].pid == 0);
    auto unnamed = landlock_denial_json(read[0], read[0].denials[0], "agent-1");
    CHECK(unnamed["op"] == "open");
    CHECK(unnamed["target"] == "/secret");
    CHECK(unnamed["comm"] == "");
    CHECK(unnamed["errno"] == 13);
}

// The trail line of a denial of /p with these blockers.
static nlohmann::ordered_json denial_for(const std::string& blockers)
{
    return landlock_denial_json(LandlockEvent{}, {1, blockers, "/p", ""}, "c");
}

TEST_CASE("events without Landlock records are dropped, and each blocker names its operation")
{
    LandlockEvents events;
    events.add(parsed(audit_syscall_record, "audit(1.000:1): pid=1 comm=\"x\""));
    events.add(parsed(audit_end_of_event, "audit(1.000:1): "));
    CHECK(events.take(true).empty());

    auto op_of = [](const std::string& blockers) { return denial_for(blockers)["op"].get<std::string>(); };
    CHECK(op_of("fs.write_file") == "open");
    CHECK(op_of("fs.make_reg,fs.refer") == "create");
    CHECK(op_of("fs.remove_file") == "unlink");
    CHECK(op_of("fs.refer") == "rename");
    CHECK(op_of("fs.change_topology") == "mount");
    CHECK(op_of("scope.signal") == "signal");
    CHECK(op_of("something.new") == "landlock");
}

TEST_CASE("an open's record says whether it asked to write, as the BPF LSM's records do (learn mode reads it)")
{
    const std::pair<const char*, const char*> expected[] = {
        {"fs.read_file", "read"},   {"fs.read_dir", "read"},     {"fs.write_file", "write"},
        {"fs.truncate", "write"},   {"fs.read_file,fs.write_file", "write"},
        {"fs.execute", "(none)"},   {"fs.make_reg", "(none)"}, // not opens
    };
    for (auto [blockers, access] : expected) {
        auto j = denial_for(blockers);
        CAPTURE(blockers);
        CHECK(j.value("access", "(none)") == access);
    }
}
