// SPDX-License-Identifier: Apache-2.0
#include "audit/landlock_records.hpp"

#include <doctest/doctest.h>

#include <ctime>

using namespace cerberus::audit;

namespace {

// Landlock's records of one denied read as the 7.2 kernel sent them (tests/vm/kernel-cases/audit_auditd.sh,
// auditd running, as auditd logged them): the access, the domain's first appearance, the syscall and its
// proctitle (which the collector never feeds), then the end of the event (which auditd does not log). Every
// record of an event carries one stamp.
const std::pair<uint16_t, const char*> denied_read[] = {
    {landlock_access_record, "audit(1796476164.566:32): domain=18eeb101b blockers=fs.read_file "
                             "path=\"/secret.txt\" dev=\"tmpfs\" ino=592"},
    {landlock_domain_record, "audit(1796476164.566:32): domain=18eeb101b status=allocated mode=enforcing pid=263 "
                             "uid=0 exe=\"/cerberus\" comm=\"cerberus:init\""},
    {audit_syscall_record, "audit(1796476164.566:32): arch=c000003e syscall=257 success=no exit=-13 a0=ffffff9c "
                           "a1=7ffdbd009f77 a2=0 a3=0 items=0 ppid=263 pid=264 auid=4294967295 uid=0 gid=0 euid=0 "
                           "suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 tty=(none) ses=4294967295 comm=\"cat\" "
                           "exe=\"/bin/busybox\" subj=unconfined key=(null)"},
    {1327, "audit(1796476164.566:32): proctitle=636174002F7365637265742E747874"}, // AUDIT_PROCTITLE
};

std::vector<LandlockEvent> feed(LandlockRecords& records, std::initializer_list<std::pair<uint16_t, const char*>> list)
{
    for (auto [type, text] : list)
        records.add(type, text);
    return records.take(Completion::ended);
}

std::string stamped_now(const std::string& rest)
{
    return "audit(" + std::to_string(std::time(nullptr)) + ".250:" + rest;
}

} // namespace

TEST_CASE("records of one event are grouped by libauparse; the domain's creator comes at once, the event at its end")
{
    LandlockRecords records;
    std::vector<std::optional<DomainAllocation>> allocations;
    for (auto [type, text] : denied_read)
        allocations.push_back(records.add(type, text));
    // An exec denied in a later event of the same second, with no SYSCALL record and so no end.
    records.add(landlock_access_record,
                "audit(1796476164.900:33): domain=18eeb101b blockers=fs.execute path=\"/usr/bin/nc\" dev=\"sda\" ino=9");
    REQUIRE(allocations[1].has_value());
    CHECK(allocations[1]->domain == 0x18eeb101b);
    CHECK(allocations[1]->creator == 263);
    CHECK_FALSE(allocations[0].has_value());
    CHECK(records.take(Completion::ended).empty()); // no end of event yet
    auto done = feed(records, {{audit_end_of_event, "audit(1796476164.566:32): "}});
    REQUIRE(done.size() == 1);
    const auto& read = done[0];
    CHECK(read.serial == 32);
    CHECK(read.wall_ns == 1796476164566000000);
    REQUIRE(read.denials.size() == 1);
    CHECK(read.denials[0].domain == 0x18eeb101b);
    CHECK(read.denials[0].blockers == "fs.read_file");
    CHECK(read.denials[0].path == "/secret.txt");
    CHECK(read.pid == 264);
    CHECK(read.uid == 0);
    CHECK(read.gid == 0);
    CHECK(read.comm == "cat");
    CHECK(read.exe == "/bin/busybox");
    CHECK(read.err == 13);

    auto line = landlock_denial_json(read, read.denials[0], "agent-1");
    CHECK(line["type"] == "denial");
    CHECK(line["id"] == "agent-1");
    CHECK(line["time"] == "2026-12-05T13:09:24.566000000Z");
    CHECK(line["op"] == "open");
    CHECK(line["access"] == "read");
    CHECK(line["target"] == "/secret.txt");
    CHECK(line["rule"] == "not in allowed_paths or read_only_paths");
    CHECK(line["comm"] == "cat");
    CHECK(line["pid"] == 264);
    CHECK(line["error"] == "EACCES");
    CHECK(line["verdict"] == "denied");

    // The exec's event has no end: it is handed over once older than end_of_event (it is from 2026-12-05).
    auto exec = records.take(Completion::aged);
    REQUIRE(exec.size() == 1);
    CHECK(exec[0].serial == 33);
    CHECK(exec[0].pid == 0);
    auto unnamed = landlock_denial_json(exec[0], exec[0].denials[0], "agent-1");
    CHECK(unnamed["op"] == "exec");
    CHECK(unnamed["target"] == "/usr/bin/nc");
    CHECK(unnamed["rule"] == "not in allowed_bins");
    CHECK(unnamed["comm"] == "");
    CHECK(unnamed["errno"] == 13);
    CHECK(records.take(Completion::all).empty());
}

TEST_CASE("an event without an end is kept while it is young, and handed over when everything is taken")
{
    LandlockRecords records;
    records.add(landlock_access_record,
                stamped_now("31): domain=2b blockers=fs.write_file,fs.truncate path=\"/etc/passwd\" dev=\"vda2\" ino=1"));
    records.add(landlock_access_record, stamped_now("31): domain=2b blockers=fs.read_file path=\"/etc/shadow\""));
    CHECK(records.take(Completion::ended).empty());
    CHECK(records.take(Completion::aged).empty()); // stamped this second: not over end_of_event ago
    auto all = records.take(Completion::all);
    REQUIRE(all.size() == 1);
    REQUIRE(all[0].denials.size() == 2); // two records of one event
    CHECK(all[0].denials[0].path == "/etc/passwd");
    CHECK(all[0].denials[1].path == "/etc/shadow");
    CHECK(landlock_denial_json(all[0], all[0].denials[0], "c")["access"] == "write");
}

TEST_CASE("quoted and hex-encoded values are decoded, others kept as they are")
{
    LandlockRecords records;
    auto events = feed(records, {{landlock_access_record, "audit(1.000:1): domain=a blockers=fs.read_file "
                                                          "path=2F746D702F6120622E747874 dev=\"vda\" ino=1234"},
                                 {audit_syscall_record, "audit(1.000:1): arch=c000003e syscall=257 success=no "
                                                        "exit=-13 pid=9 uid=0 gid=0 comm=6D7920636174 exe=\"/bin/cat\""},
                                 {audit_end_of_event, "audit(1.000:1): "}});
    REQUIRE(events.size() == 1);
    REQUIRE(events[0].denials.size() == 1);
    CHECK(events[0].denials[0].path == "/tmp/a b.txt"); // a path with a space comes hex-encoded
    CHECK(events[0].denials[0].domain == 0xa);
    CHECK(events[0].comm == "my cat");
    CHECK(events[0].exe == "/bin/cat");
}

TEST_CASE("events without Landlock records, malformed records and a signal's target")
{
    LandlockRecords records;
    CHECK(feed(records, {{audit_syscall_record, "audit(1.000:1): pid=1 comm=\"x\""},
                         {audit_end_of_event, "audit(1.000:1): "}})
              .empty());
    CHECK(feed(records, {{landlock_access_record, ""},
                         {landlock_access_record, "domain=1 blockers=fs.execute"},
                         {landlock_access_record, "audit(x.000:3): domain=1 blockers=fs.execute"},
                         {landlock_access_record, "audit(2.000:4): blockers=fs.execute path=\"/no/domain\""},
                         {landlock_domain_record, "audit(2.000:5): domain=1 status=deallocated denials=3"}})
              .empty());
    CHECK(records.take(Completion::all).empty());
    // A line break cannot make a second record.
    CHECK(audit_log_line(landlock_access_record, "audit(1.000:1): a=b\ntype=EOE msg=audit(1.000:1): ") ==
          "type=UNKNOWN[1423] msg=audit(1.000:1): a=b\n");
    CHECK(audit_log_line(audit_end_of_event, "audit(1.000:1): ") == "type=EOE msg=audit(1.000:1): \n");

    auto events = feed(records, {{landlock_access_record, "audit(3.000:6): domain=1 blockers=scope.signal opid=77 "
                                                          "ocomm=\"victim\""},
                                 {audit_end_of_event, "audit(3.000:6): "}});
    REQUIRE(events.size() == 1);
    auto line = landlock_denial_json(events[0], events[0].denials[0], "c");
    CHECK(line["op"] == "signal");
    CHECK(line["target"] == "pid=77");
}

// The trail line of a denial of /p with these blockers.
static nlohmann::ordered_json denial_for(const std::string& blockers)
{
    return landlock_denial_json(LandlockEvent{}, {1, blockers, "/p", ""}, "c");
}

TEST_CASE("each blocker names its operation")
{
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
