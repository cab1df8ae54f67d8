// SPDX-License-Identifier: Apache-2.0
// OCI hooks: run in order with the state on stdin, their args and env; a
// failure, a program that cannot run, a timeout or a signal is an error naming
// the hook, except for poststart and poststop, whose failures are warnings.
#include "base/error.hpp"
#include "base/files.hpp"
#include "process/hooks.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

#include <fstream>

using namespace cerberus;

namespace {

// A hook running /bin/sh -c SCRIPT.
spec::Hook sh(const std::string& script, std::vector<std::string> env = {}, std::optional<int> timeout = {})
{
    return {"/bin/sh", {"sh", "-c", script}, std::move(env), timeout};
}

} // namespace

TEST_CASE("hooks: in order, with the state on stdin, their own args and env")
{
    TempDir dir;
    std::string log = dir.path + "/log";
    hooks::run_all({sh("cat >> " + log + "; echo \" first $X\" >> " + log, {"X=1"}),
                    sh("echo \"second $0 $X\" >> " + log)},
                   "prestart", R"({"status":"created"})");
    CHECK(files::read_file(log) == "{\"status\":\"created\"} first 1\nsecond sh \n");
}

TEST_CASE("hooks: a hook without args gets its path as argv[0]")
{
    TempDir dir;
    std::string script = dir.path + "/hook";
    std::ofstream(script) << "#!/bin/sh\necho \"$0\" > " + dir.path + "/argv0\n";
    REQUIRE(::chmod(script.c_str(), 0755) == 0);
    hooks::run_all({{script, {}, {}, std::nullopt}}, "poststop", "{}");
    CHECK(files::read_file(dir.path + "/argv0") == script + "\n");
}

TEST_CASE("hooks: failures name the kind, the index and the path, and stop the rest")
{
    TempDir dir;
    std::string after = dir.path + "/after";
    auto error_of = [&](const spec::Hook& failing) -> Error {
        try {
            hooks::run_all({sh("true"), failing, sh("touch " + after)}, "createRuntime", "{}");
        } catch (const Error& e) {
            return e;
        }
        FAIL("the hook did not fail");
        return Error("");
    };
    Error status = error_of(sh("exit 3"));
    CHECK(std::string(status.what()) == "error running hook #1 (createRuntime, /bin/sh): exited with status 3");
    CHECK(status.errnum() == ECHILD);
    Error missing = error_of({"/nonexistent/hook", {}, {}, std::nullopt});
    CHECK(std::string(missing.what()) == "error running hook #1 (createRuntime, /nonexistent/hook): cannot execute /nonexistent/hook");
    CHECK(missing.errnum() == ENOENT);
    Error signal = error_of(sh("kill -TERM $$"));
    CHECK(std::string(signal.what()) == "error running hook #1 (createRuntime, /bin/sh): killed by signal 15 (terminated)");
    Error timeout = error_of(sh("sleep 10", {}, 1));
    CHECK(std::string(timeout.what()) == "error running hook #1 (createRuntime, /bin/sh): timed out after 1s");
    CHECK(timeout.errnum() == ETIMEDOUT);
    CHECK_FALSE(std::ifstream(after)); // none of the hooks after a failure ran
}

TEST_CASE("hooks: a hook that does not read its stdin still succeeds")
{
    std::string big(1 << 20, 'x'); // more than a pipe holds
    CHECK_NOTHROW(hooks::run_all({sh("exit 0")}, "prestart", big));
}

TEST_CASE("hooks: poststart and poststop failures are warnings, and every hook runs")
{
    TempDir dir;
    std::string after = dir.path + "/after";
    CHECK_NOTHROW(hooks::run_all_warning_on_failure({sh("exit 1"), sh("touch " + after)}, "poststop", "{}"));
    CHECK(std::ifstream(after));
}
