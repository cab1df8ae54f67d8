// SPDX-License-Identifier: Apache-2.0
// What runc derives for the container process: the program's path and its
// errors (engines map their words to exit statuses), and HOME.
#include "base/error.hpp"
#include "base/files.hpp"
#include "process/process_launch.hpp"
#include "process/user.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

using namespace cerberus;

namespace {

std::string lookup_error(const std::string& program, const std::vector<std::string>& env = {})
{
    try {
        launch::lookup_path(program, env);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("errno texts are spelled as runc's (Go's): lowercase")
{
    CHECK(errno_text(ENOENT) == "no such file or directory");
    CHECK(errno_text(EACCES) == "permission denied");
    CHECK(errno_text(EPERM) == "operation not permitted");
}

TEST_CASE("lookup_path: runc's messages for what cannot be run")
{
    TempDir dir;
    const std::string script = dir.path + "/script", plain = dir.path + "/plain";
    files::write_file_atomic(script, "#!/bin/sh\n", 0755);
    files::write_file_atomic(plain, "data\n", 0644);

    CHECK(launch::lookup_path(script, {}) == script);
    CHECK(lookup_error(dir.path + "/missing") ==
          "exec: \"" + dir.path + "/missing\": stat " + dir.path + "/missing: no such file or directory");
    CHECK(lookup_error(plain) == "exec: \"" + plain + "\": permission denied");
    // A directory has execute bits, yet it is no program: refused at create.
    CHECK(lookup_error(dir.path) == "exec: \"" + dir.path + "\": permission denied");

    // PATH search skips directories and files without execute bits.
    std::filesystem::create_directory(dir.path + "/sub");
    std::filesystem::create_directory(dir.path + "/sub/script");
    CHECK(launch::lookup_path("script", {"PATH=" + dir.path + "/sub:" + dir.path}) == script);
    CHECK(lookup_error("plain", {"PATH=" + dir.path}) == "exec: \"plain\": executable file not found in $PATH");
}

TEST_CASE("HOME from the container's passwd when the spec leaves it out")
{
    TempDir dir;
    const std::string passwd = dir.path + "/passwd";
    files::write_file_atomic(passwd, "root:x:0:0:root:/root:/bin/sh\n"
                              "broken line\n"
                              "agent:x:1000:1000::/home/agent:/bin/sh\n",
                             0644);
    auto home_of = [&](const std::vector<std::string>& env, uint32_t uid) {
        for (const auto& e : user::environment_with_home(env, uid, passwd))
            if (e.rfind("HOME=", 0) == 0)
                return e;
        return std::string();
    };
    CHECK(home_of({"PATH=/bin"}, 0) == "HOME=/root");
    CHECK(home_of({"PATH=/bin"}, 1000) == "HOME=/home/agent");
    CHECK(home_of({"PATH=/bin"}, 4242) == "HOME=/"); // no line for the uid
    CHECK(home_of({"HOME=/work"}, 0) == "HOME=/work"); // the spec's own wins
    CHECK(home_of({"HOME="}, 0) == "HOME=/root");       // an empty one does not, as in runc
    CHECK(user::environment_with_home({"A=1"}, 0, dir.path + "/none") == std::vector<std::string>{"A=1", "HOME=/"});
}
