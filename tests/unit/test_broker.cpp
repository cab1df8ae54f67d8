// SPDX-License-Identifier: Apache-2.0
// The command broker's parts that need no host: what the shim and the broker
// say (the shim's C ends of the wire against the broker's: malformed calls
// refused, naming what is wrong; answers both ways), its
// registration read back, the trail's `command` record as JSON and text, and the deferred close.
#include "audit/audit_format.hpp"
#include "base/error.hpp"
#include "broker/broker_protocol.hpp"
#include "broker/broker_call.hpp"
#include "broker/broker_registry.hpp"
#include "broker/deferred_close.hpp"
#include "policy/policy.hpp"
#include "shim_wire.h"

#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>

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

// The request the shim sends for this call.
std::string shim_request(const std::string& tool, const std::string& cwd, const std::vector<std::string>& args)
{
    std::vector<const char*> argv;
    for (const auto& arg : args)
        argv.push_back(arg.c_str());
    std::string message(shim_wire_write_request(nullptr, 0, tool.c_str(), cwd.c_str(), argv.size(), argv.data()), '\0');
    REQUIRE(shim_wire_write_request(message.data(), message.size(), tool.c_str(), cwd.c_str(), argv.size(),
                                    argv.data()) == message.size());
    return message;
}

std::string with_header(uint32_t magic, uint32_t arg_count, const std::string& strings)
{
    cerberus_wire_request header{magic, arg_count};
    return std::string(reinterpret_cast<const char*>(&header), sizeof header) + strings;
}

std::string refusal(const std::string& message)
{
    try {
        parse_request(message);
    } catch (const Error& e) {
        CHECK(e.errnum() == EINVAL);
        return e.what();
    }
    return "accepted";
}

std::optional<shim_wire_answer> shim_reading(const std::string& message)
{
    shim_wire_answer answer{};
    if (shim_wire_read_answer(message.data(), message.size(), &answer) < 0)
        return std::nullopt;
    return answer;
}

} // namespace

TEST_CASE("broker protocol: the request the shim writes read back by the broker, malformed ones refused")
{
    std::vector<std::string> args{"push", "origin", "feature/a", "with space", ""};
    Request back = parse_request(shim_request("git", "/work/r", args));
    CHECK(back.tool == "git");
    CHECK(back.args == args);
    CHECK(back.cwd == "/work/r");
    char small[16];
    std::memset(small, 'x', sizeof small);
    const char* one[] = {"status"};
    CHECK(shim_wire_write_request(small, sizeof small, "git", "/", 1, one) == 8 + 4 + 2 + 7);
    CHECK(std::string(small, sizeof small) == std::string(sizeof small, 'x')); // too long: nothing written
    CHECK(refusal(with_header(CERBERUS_WIRE_MAGIC, 0, std::string("git\0/\0", 6))) == "accepted"); // control
    CHECK(refusal("cbw") == "malformed call: 3 bytes, shorter than a request's header");
    CHECK(refusal(with_header(CERBERUS_WIRE_MAGIC + 1, 0, std::string("git\0/\0", 6))) ==
          "malformed call: not a request of this broker's wire (another version of the shim?)");
    CHECK(refusal(with_header(CERBERUS_WIRE_MAGIC, 0, std::string("git\0/", 5))) ==
          "malformed call: its last string is not NUL-terminated");
    CHECK(refusal(with_header(CERBERUS_WIRE_MAGIC, 0, "")) == "malformed call: its last string is not NUL-terminated");
    CHECK(refusal(with_header(CERBERUS_WIRE_MAGIC, 2, std::string("git\0/\0a\0", 8))) ==
          "malformed call: 3 strings, not the tool, the working directory and 2 arguments");
    CHECK(refusal(with_header(CERBERUS_WIRE_MAGIC, 0, std::string("git\0/\0a\0", 8))) ==
          "malformed call: 3 strings, not the tool, the working directory and 0 arguments");
    CHECK(refusal(shim_request("git", "work", {})) == "malformed call: the working directory is not an absolute path");
    CHECK(refusal(shim_request("git", "", {})) == "malformed call: the working directory is not an absolute path");
    CHECK(refusal(shim_request("git", "/", std::vector<std::string>(max_args + 1, "a"))) ==
          "malformed call: 4097 arguments, more than 4096");
    CHECK(refusal(shim_request("git", "/", std::vector<std::string>(max_args, "a"))) == "accepted"); // at the limit
    std::string longest = shim_request("git", "/", {std::string(max_request_bytes - 8 - 4 - 2 - 1, 'a')});
    REQUIRE(longest.size() == max_request_bytes);
    CHECK(refusal(longest) == "accepted");
    CHECK(refusal(longest + '\0') == "malformed call: longer than 131072 bytes");
    const std::string not_utf8 = "malformed call: its tool, working directory or an argument is not UTF-8 text";
    CHECK(refusal(shim_request("git", "/", {"caf\xc3\xa9", "\xf0\x9f\x90\x95"})) == "accepted"); // control: UTF-8
    CHECK(refusal(shim_request("git", "/", {"caf\xe9"})) == not_utf8);                          // Latin-1
    CHECK(refusal(shim_request("git", "/w\xff", {})) == not_utf8);
    CHECK(refusal(shim_request("g\xc3", "/", {})) == not_utf8); // cut in the middle of a character
}

TEST_CASE("broker protocol: the answers the broker writes read back by the shim, anything else is none")
{
    const std::pair<Answer, cerberus_wire_answer_kind> answers[] = {
        {{Answer::Kind::exited, 3, {}}, CERBERUS_WIRE_EXITED},
        {{Answer::Kind::signaled, 9, {}}, CERBERUS_WIRE_SIGNALED},
        {{Answer::Kind::denied, 0, "commands.git.deny[0] \"push --force *\""}, CERBERUS_WIRE_DENIED},
        {{Answer::Kind::failed, 0, "no git on the host"}, CERBERUS_WIRE_FAILED}};
    for (const auto& [answer, kind] : answers) {
        auto back = shim_reading(answer_message(answer));
        REQUIRE(back);
        CHECK(back->kind == kind);
        CHECK(back->number == answer.number);
        CHECK(std::string(back->text, back->text_length) == answer.text);
    }
    std::string denied = answer_message({Answer::Kind::denied, 0, "rule"});
    CHECK(shim_reading(denied)); // control for each of these
    CHECK_FALSE(shim_reading(""));
    CHECK_FALSE(shim_reading(denied.substr(0, sizeof(cerberus_wire_answer) - 1)));
    CHECK_FALSE(shim_reading(denied.substr(0, denied.size() - 1))); // shorter than its text
    CHECK_FALSE(shim_reading(denied + "x"));                      // longer
    std::string other_magic = denied, no_kind = denied;
    other_magic[0] ^= 1;
    no_kind[offsetof(cerberus_wire_answer, kind)] = 9;
    CHECK_FALSE(shim_reading(other_magic));
    CHECK_FALSE(shim_reading(no_kind));
    CHECK_FALSE(shim_reading("garbage"));
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
