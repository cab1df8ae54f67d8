// SPDX-License-Identifier: Apache-2.0
// Asks (audit/asks.hpp): an operator's answers as `cerberus ask` sends them,
// and grants: the exact call of one container, until they expire, are
// revoked or their container goes; kept in a file a new book reads again.
#include "base/error.hpp"
#include "audit/asks.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

using namespace cerberus;
using namespace cerberus::audit;
using namespace std::chrono_literals;

TEST_CASE("asks: an operator's answer, read and written back")
{
    CHECK(parse_ask_answer("once").kind == AskAnswer::Kind::once);
    CHECK(parse_ask_answer("always").kind == AskAnswer::Kind::always);
    CHECK(parse_ask_answer("deny").kind == AskAnswer::Kind::deny);
    auto lasting = parse_ask_answer("for 10m");
    CHECK(lasting.kind == AskAnswer::Kind::lasting);
    CHECK(lasting.lasting == 10min);
    CHECK(ask_answer_text(lasting) == "for 10m");
    CHECK(answered_words(lasting, 0) == "allowed for 10m by uid 0");
    CHECK(answered_words(parse_ask_answer("deny"), 1000) == "denied by uid 1000");
    CHECK_THROWS_WITH_AS(parse_ask_answer("for 10x"), doctest::Contains("\"10x\" is not a duration"), Error);
    CHECK_THROWS_WITH_AS(parse_ask_answer("for "), doctest::Contains("is not a duration"), Error);
    CHECK_THROWS_WITH_AS(parse_ask_answer("maybe"), doctest::Contains("\"maybe\" is no answer"), Error);
}

namespace {

Grant grant_of(uint64_t cgroup_id, std::vector<std::string> args, std::optional<int64_t> expires_ns)
{
    return {.container = "agent-" + std::to_string(cgroup_id), .cgroup_id = cgroup_id,
            .subject = {.tool = "git", .args = std::move(args)}, .granted_by = 0, .granted_ns = 100,
            .expires_ns = expires_ns};
}

} // namespace

TEST_CASE("asks: a grant matches its container's exact call until it expires")
{
    TempDir dir;
    GrantBook book(dir.path + "/grants.json");
    book.load(); // no file: none
    CHECK(book.grants().empty());
    Grant lasting = book.add(grant_of(7, {"push", "origin", "fix/a"}, 1000));
    CHECK(lasting.id.starts_with("g-"));
    std::string lasting_id = lasting.id;
    CHECK(book.match(7, {.tool = "git", .args = {"push", "origin", "fix/a"}}, 999));
    CHECK_FALSE(book.match(7, {.tool = "git", .args = {"push", "origin", "fix/a"}}, 1000)); // expired at its time
    CHECK_FALSE(book.match(7, {.tool = "git", .args = {"push", "origin", "fix/b"}}, 999));  // the exact call only
    CHECK_FALSE(book.match(7, {.tool = "git", .args = {"push", "origin"}}, 999));
    CHECK_FALSE(book.match(8, {.tool = "git", .args = {"push", "origin", "fix/a"}}, 999)); // another container's
    CHECK_FALSE(book.match(7, {.tool = "gh", .args = {"push", "origin", "fix/a"}}, 999));
    book.add(grant_of(8, {"status"}, std::nullopt)); // always
    CHECK(book.match(8, {.tool = "git", .args = {"status"}}, INT64_MAX));
    // kept in the file, read again by another book (a restarted broker)
    GrantBook again(dir.path + "/grants.json");
    again.load();
    CHECK(again.grants() == book.grants());
    CHECK(again.drop_expired(1000));
    CHECK(again.grants().size() == 1);
    CHECK_FALSE(again.drop_expired(2000)); // nothing left to expire
    CHECK(again.drop_container(8));
    CHECK(again.grants().empty());
    CHECK(read_grants(dir.path + "/grants.json").empty());
    // A change reads the file first: what another book dropped is not written back.
    CHECK_FALSE(book.revoke(lasting_id));
    CHECK(book.grants().empty());
    CHECK(read_grants(dir.path + "/grants.json").empty());
    Grant kept = book.add(grant_of(7, {"status"}, std::nullopt));
    CHECK(book.revoke(kept.id)); // the control: a grant the file holds is revoked
    CHECK_FALSE(book.revoke(kept.id));
    CHECK(read_grants(dir.path + "/none.json").empty());
}

TEST_CASE("asks: a host name's grant, and two holders sharing the file keep each other's grants")
{
    TempDir dir;
    GrantBook gate(dir.path + "/grants.json");
    GrantBook broker(dir.path + "/grants.json");
    gate.load();
    broker.load();
    Grant name{.container = "agent-7", .cgroup_id = 7, .subject = {.host = "api.example.com"}, .granted_ns = 100,
               .expires_ns = 1000};
    Grant added = gate.add(name);
    CHECK(gate.match(7, {.host = "api.example.com"}, 999));
    CHECK_FALSE(gate.match(7, {.host = "www.example.com"}, 999)); // the exact name only
    CHECK_FALSE(gate.match(7, {.tool = "api.example.com"}, 999)); // a name is no command
    broker.add(grant_of(7, {"status"}, std::nullopt)); // the broker did not load the gate's grant: it reads it first
    CHECK(read_grants(dir.path + "/grants.json").size() == 2);
    CHECK(gate.revoke(added.id));
    auto left = read_grants(dir.path + "/grants.json");
    REQUIRE(left.size() == 1);
    CHECK(left[0].subject.tool == "git");
    CHECK(grant_from_json(to_json(name)).subject == name.subject);
    CHECK(subject_text(name.subject) == "host api.example.com");
    CHECK(subject_text(left[0].subject) == "git status");
}

TEST_CASE("asks: an answer grants for a while or always, never once or deny")
{
    PendingAsk ask{.id = "0a1b2c3d", .container = "agent-7", .cgroup_id = 7, .subject = {.host = "api.example.com"}};
    auto lasting = grant_for(ask, parse_ask_answer("for 2s"), 0, 1'000);
    REQUIRE(lasting);
    CHECK(lasting->expires_ns == 1'000 + 2'000'000'000);
    CHECK(lasting->subject == ask.subject);
    auto always = grant_for(ask, parse_ask_answer("always"), 0, 1'000);
    REQUIRE(always);
    CHECK_FALSE(always->expires_ns);
    CHECK_FALSE(grant_for(ask, parse_ask_answer("once"), 0, 1'000));
    CHECK_FALSE(grant_for(ask, parse_ask_answer("deny"), 0, 1'000));
}

TEST_CASE("asks: an operator's request, root's alone; a second answer is told the first")
{
    TempDir dir;
    GrantBook book(dir.path + "/grants.json");
    book.load();
    int answered = 0;
    AnswerAsk answer = [&](const std::string& id, const AskAnswer&, uid_t) {
        ++answered;
        return "ok: ask " + id;
    };
    CHECK(answer_operator("ask 0a1b2c3d once", 1000, answer, book).starts_with("error: only root answers asks"));
    CHECK(answered == 0);
    CHECK(answer_operator("ask 0a1b2c3d once", 0, answer, book) == "ok: ask 0a1b2c3d"); // the control
    CHECK(answered == 1);
    CHECK(answer_operator("ask 0a1b2c3d maybe", 0, answer, book).starts_with("error: \"maybe\" is no answer"));
    CHECK(answer_operator("revoke g-00000000", 0, answer, book) == "error: no grant g-00000000");
    Grant kept = book.add(grant_of(7, {"status"}, std::nullopt));
    CHECK(answer_operator("revoke " + kept.id, 0, answer, book) == "ok: grant " + kept.id + " revoked");
    CHECK(answer_operator("stop", 0, answer, book) == "unknown request");
    AnsweredAsks asked;
    CHECK(asked.told("0a1b2c3d").starts_with("error: no pending ask 0a1b2c3d"));
    asked.remember("0a1b2c3d", "allowed once by uid 0");
    CHECK(asked.knows("0a1b2c3d"));
    CHECK(asked.told("0a1b2c3d") == "error: ask 0a1b2c3d was answered already: allowed once by uid 0");
}

TEST_CASE("asks: a pending ask as its file holds it")
{
    PendingAsk ask{.id = "0a1b2c3d", .container = "agent-7", .cgroup_id = 7,
                   .subject = {.tool = "git", .args = {"push", "origin", "x"}}, .cwd = "/work", .pid = 42, .rule = "commands.git.ask[0] \"push *\"",
                   .asked_ns = 1, .deadline_ns = 2};
    auto back = pending_ask_from_json(to_json(ask));
    CHECK(back.id == ask.id);
    CHECK(back.subject == ask.subject);
    CHECK(back.deadline_ns == 2);
    auto broken = to_json(ask);
    broken.erase("pid");
    CHECK_THROWS(pending_ask_from_json(broken));
    PendingAsk name{.id = "1a2b3c4d", .container = "agent-7", .cgroup_id = 7, .subject = {.host = "api.example.com"},
                    .rule = "ask_hosts \"api.example.com\"", .asked_ns = 1, .deadline_ns = 2};
    auto name_back = pending_ask_from_json(to_json(name));
    CHECK(name_back.subject == name.subject);
    CHECK_FALSE(to_json(name).contains("pid")); // the gate knows no process of a query
    CHECK(new_ask_id().size() == 8);
    CHECK(new_ask_id() != new_ask_id());
}
