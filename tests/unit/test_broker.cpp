// SPDX-License-Identifier: Apache-2.0
// The command broker's parts that need no host: what the shim and the broker
// say (malformed calls refused, naming what is wrong; answers both ways), its
// registration read back, the trail's `command` record as JSON and text, and the deferred close.
#include "audit/audit_format.hpp"
#include "base/error.hpp"
#include "broker/broker_protocol.hpp"
#include "broker/broker_call.hpp"
#include "broker/broker_registry.hpp"
#include "broker/deferred_close.hpp"
#include "policy/policy.hpp"

#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <functional>

using namespace cerberus;
using namespace cerberus::broker;

namespace {

void write_file(const std::string& path, const std::string& text, mode_t mode)
{
    std::ofstream(path) << text;
    REQUIRE(chmod(path.c_str(), mode) == 0);
}

std::string thrown(const std::function<void()>& f)
{
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "nothing thrown";
}

std::string refusal(const std::string& text)
{
    try {
        parse_request(text);
    } catch (const Error& e) {
        CHECK(e.errnum() == EINVAL);
        return e.what();
    }
    return "accepted";
}

} // namespace

TEST_CASE("broker protocol: a request read back as sent, malformed ones refused")
{
    Request request{"git", {"push", "origin", "feature/a", "with space"}, "/work/r"};
    Request back = parse_request(request_json(request));
    CHECK(back.tool == "git");
    CHECK(back.args == request.args);
    CHECK(back.cwd == "/work/r");
    CHECK(refusal("not json") == "malformed call: not a JSON object");
    CHECK(refusal("[1]") == "malformed call: not a JSON object");
    CHECK(refusal(R"({"args": [], "cwd": "/"})") == "malformed call: \"tool\" is not a string");
    CHECK(refusal(R"({"tool": "git", "args": "x", "cwd": "/"})") == "malformed call: \"args\" is not an array");
    CHECK(refusal(R"({"tool": "git", "args": [1], "cwd": "/"})") ==
          "malformed call: an argument is not a string without NUL bytes");
    CHECK(refusal(R"({"tool": "git", "args": ["a\u0000b"], "cwd": "/"})") ==
          "malformed call: an argument is not a string without NUL bytes");
    CHECK(refusal(R"({"tool": "git", "args": [], "cwd": "work"})") == "malformed call: \"cwd\" is not an absolute path");
    Request many{"git", std::vector<std::string>(max_args + 1, "a"), "/"};
    CHECK(refusal(request_json(many)) == "malformed call: 4097 arguments, more than 4096");
    Request most{"git", std::vector<std::string>(max_args, "a"), "/"};
    CHECK(refusal(request_json(most)) == "accepted"); // control: at the limit
    CHECK(refusal(std::string(max_request_bytes + 1, ' ')).starts_with("malformed call: longer than"));
}

TEST_CASE("broker protocol: answers both ways, anything else is none")
{
    for (const Answer& answer : {Answer{Answer::Kind::exited, 3, {}}, Answer{Answer::Kind::signaled, 9, {}},
                                 Answer{Answer::Kind::denied, 0, "commands.git.deny[0] \"push --force *\""},
                                 Answer{Answer::Kind::failed, 0, "no git on the host"}}) {
        auto back = parse_answer(answer_json(answer));
        REQUIRE(back);
        CHECK(back->kind == answer.kind);
        CHECK(back->number == answer.number);
        CHECK(back->text == answer.text);
    }
    CHECK_FALSE(parse_answer("{}"));
    CHECK_FALSE(parse_answer(R"({"status": "0"})"));
    CHECK_FALSE(parse_answer(R"({"status": 0, "signal": 9})"));
    CHECK_FALSE(parse_answer("garbage"));
}

TEST_CASE("broker registry: a registration read back, its commands checked again")
{
    Registration registration{"agent-7", 42, "/var/log/cerberus/agent-7.jsonl", false, "/run/cerberus/agent-7/broker",
                              policy::parse_policy(R"({"commands": {"git": {"allow": ["status"], "deny": ["push *"]}}})")
                                  .commands};
    Registration back = registration_from_json(to_json(registration));
    CHECK(back.id == "agent-7");
    CHECK(back.cgroup_id == 42);
    CHECK(back.socket_dir == registration.socket_dir);
    CHECK(back.commands == registration.commands);
    auto tampered = to_json(registration);
    tampered["commands"]["../x"] = {{"allow", {"*"}}};
    CHECK_THROWS_AS(registration_from_json(tampered), Error);
}

TEST_CASE("trail: a command record as JSON and as text")
{
    audit::CommandCall call;
    call.tool = "git";
    call.args = {"push", "--force", "origin", "main"};
    call.cwd = "/work";
    call.verdict = "denied";
    call.rule = "commands.git.deny[0] \"push --force *\"";
    auto record = audit::command_json("agent-7", 1700000000123456789, call);
    CHECK(audit::dump_line(record) ==
          R"({"type":"command","time":"2023-11-14T22:13:20.123456789Z","id":"agent-7","tool":"git",)"
          R"("args":["push","--force","origin","main"],"cwd":"/work","verdict":"denied","backend":"static",)"
          R"("rule":"commands.git.deny[0] \"push --force *\"","duration_ms":0})");
    CHECK(audit::text_line(audit::dump_line(record)) ==
          "22:13:20.123 agent-7 command git push --force origin main DENIED "
          "(commands.git.deny[0] \"push --force *\") in 0 ms");
    call.verdict = "allowed";
    call.status = 0;
    call.duration_ms = 12;
    CHECK(audit::text_line(audit::dump_line(audit::command_json("agent-7", 1700000000123456789, call))).ends_with(
        "ALLOWED (commands.git.deny[0] \"push --force *\"), exit 0 in 12 ms"));
    call.bytes_in = 5;
    call.bytes_out = 70000;
    record = audit::command_json("agent-7", 1700000000123456789, call);
    CHECK(audit::dump_line(record).ends_with(R"("status":0,"bytes_in":5,"bytes_out":70000,"duration_ms":12})"));
    CHECK(audit::text_line(audit::dump_line(record)).ends_with("exit 0 in 12 ms, 5 bytes in, 70000 out"));
}

TEST_CASE("broker: the host's configuration may name a tool's binary; a bad entry is named")
{
    if (geteuid() != 0) {
        MESSAGE("skipped: the configuration must be root's");
        return;
    }
    TempDir dir;
    std::string config = dir.path + "/broker.json", tool = dir.path + "/kubectl";
    write_file(tool, "#!/bin/sh\n", 0755);
    write_file(config, R"({"tools": {"kubectl": ")" + tool + R"("}})", 0644);
    CHECK(host_binary("kubectl", config) == tool);
    CHECK(host_binary("sh", config).ends_with("/sh")); // control: a tool it does not name is the PATH's
    CHECK(host_binary("sh", dir.path + "/none.json").ends_with("/sh"));
    REQUIRE(chmod(tool.c_str(), 0775) == 0);
    CHECK(thrown([&] { host_binary("kubectl", config); }) ==
          config + ": tools.kubectl: " + tool + " must be a regular file of root's, executable by all and writable by root alone");
    write_file(config, R"({"tools": {"kubectl": "bin/kubectl"}})", 0644);
    CHECK(thrown([&] { host_binary("kubectl", config); }) == config + ": tools.kubectl: an absolute path");
    write_file(config, R"({"tools": ["kubectl"]})", 0644);
    CHECK(thrown([&] { host_binary("kubectl", config); }) == config + ": tools: an object of tool names and binaries");
}

TEST_CASE("broker: a deferred close closes the descriptor on its thread, and what is queued at the end")
{
    auto write_end_closed = [](int read_end) {
        pollfd fd{read_end, POLLIN, 0};
        return poll(&fd, 1, 5000) == 1 && (fd.revents & POLLHUP);
    };
    int kept[2], closed[2], queued[2];
    REQUIRE(pipe2(kept, O_CLOEXEC) == 0);
    REQUIRE(pipe2(closed, O_CLOEXEC) == 0);
    REQUIRE(pipe2(queued, O_CLOEXEC) == 0);
    UniqueFd kept_read(kept[0]), kept_write(kept[1]), closed_read(closed[0]), queued_read(queued[0]);
    {
        DeferredClose closer;
        closer.close(UniqueFd(closed[1]));
        CHECK(write_end_closed(closed_read.get()));
        pollfd control{kept_read.get(), POLLIN, 0}; // a write end not given to it stays open
        CHECK(poll(&control, 1, 0) == 0);
        closer.close(UniqueFd(queued[1]));
    }
    CHECK(write_end_closed(queued_read.get()));
}
