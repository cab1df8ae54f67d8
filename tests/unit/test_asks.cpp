// SPDX-License-Identifier: Apache-2.0
// Asks (broker/asks.hpp): an operator's answers as `cerberus ask` sends them,
// and grants: the exact call of one container, until they expire, are
// revoked or their container goes; kept in a file a new book reads again.
#include "base/error.hpp"
#include "broker/asks.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

using namespace cerberus;
using namespace cerberus::broker;
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
    return {.container = "agent-" + std::to_string(cgroup_id), .cgroup_id = cgroup_id, .tool = "git",
            .args = std::move(args), .granted_by = 0, .granted_ns = 100, .expires_ns = expires_ns};
}

} // namespace

TEST_CASE("asks: a grant matches its container's exact call until it expires")
{
    TempDir dir;
    GrantBook book(dir.path + "/grants.json");
    book.load(); // no file: none
    CHECK(book.grants().empty());
    const Grant& lasting = book.add(grant_of(7, {"push", "origin", "fix/a"}, 1000));
    CHECK(lasting.id.starts_with("g-"));
    std::string lasting_id = lasting.id;
    CHECK(book.match(7, "git", {"push", "origin", "fix/a"}, 999));
    CHECK_FALSE(book.match(7, "git", {"push", "origin", "fix/a"}, 1000)); // expired at its time
    CHECK_FALSE(book.match(7, "git", {"push", "origin", "fix/b"}, 999));  // the exact call only
    CHECK_FALSE(book.match(7, "git", {"push", "origin"}, 999));
    CHECK_FALSE(book.match(8, "git", {"push", "origin", "fix/a"}, 999)); // another container's
    CHECK_FALSE(book.match(7, "gh", {"push", "origin", "fix/a"}, 999));
    book.add(grant_of(8, {"status"}, std::nullopt)); // always
    CHECK(book.match(8, "git", {"status"}, INT64_MAX));
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
    CHECK(book.revoke(lasting_id));
    CHECK_FALSE(book.revoke(lasting_id));
    CHECK(read_grants(dir.path + "/grants.json").size() == 1); // the book's own save
    CHECK(read_grants(dir.path + "/none.json").empty());
}

TEST_CASE("asks: a pending ask as its file holds it")
{
    PendingAsk ask{.id = "0a1b2c3d", .container = "agent-7", .cgroup_id = 7, .tool = "git",
                   .args = {"push", "origin", "x"}, .cwd = "/work", .pid = 42, .rule = "commands.git.ask[0] \"push *\"",
                   .asked_ns = 1, .deadline_ns = 2};
    auto back = pending_ask_from_json(to_json(ask));
    CHECK(back.id == ask.id);
    CHECK(back.args == ask.args);
    CHECK(back.deadline_ns == 2);
    auto broken = to_json(ask);
    broken.erase("pid");
    CHECK_THROWS(pending_ask_from_json(broken));
    CHECK(new_ask_id().size() == 8);
    CHECK(new_ask_id() != new_ask_id());
}
