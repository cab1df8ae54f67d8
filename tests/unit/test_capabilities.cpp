// SPDX-License-Identifier: Apache-2.0
// Identity and capabilities are applied in forked children, which send their
// /proc/self/status back through a pipe.
#include "base/error.hpp"
#include "base/fd.hpp"
#include "process/capabilities.hpp"
#include "process/user.hpp"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <sstream>

using namespace cerberus;

namespace {

using Status = std::map<std::string, std::string>;

// Applies user and capabilities in the order init uses and returns the
// child's /proc/self/status fields; "error" holds what it threw.
Status apply_in_child(const spec::User& user, const capabilities::CapabilitySets& sets,
                      const std::function<void()>& prepare = [] {})
{
    int pipe_fds[2];
    REQUIRE(pipe2(pipe_fds, O_CLOEXEC) == 0);
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        std::string report;
        try {
            prepare();
            capabilities::drop_bounding_set(sets);
            user::apply_user(user);
            capabilities::apply_capabilities(sets);
            std::ifstream status("/proc/self/status");
            report.assign(std::istreambuf_iterator<char>(status), {});
        } catch (const Error& e) {
            report = std::string("error:\t") + e.what() + "\n";
        }
        bool written = write(write_end.get(), report.data(), report.size()) == static_cast<ssize_t>(report.size());
        _exit(written ? 0 : 1);
    }
    write_end.reset();
    std::string output;
    char buf[4096];
    for (ssize_t n; (n = read(read_end.get(), buf, sizeof(buf))) > 0;)
        output.append(buf, static_cast<size_t>(n));
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);

    Status fields;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);)
        if (auto colon = line.find(":\t"); colon != std::string::npos) {
            // Kernels differ in the spaces after a list of groups.
            auto value = line.substr(colon + 2);
            value.erase(value.find_last_not_of(' ') + 1);
            fields[line.substr(0, colon)] = value;
        }
    return fields;
}

std::string parse_error(const spec::Capabilities& config, unsigned last_cap = CAP_LAST_CAP)
{
    try {
        capabilities::parse_capabilities(config, last_cap);
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("capabilities: a non-root user keeps exactly the configured capabilities")
{
    spec::User user{1000, 1000, 027, {2000}};
    spec::Capabilities config;
    config.bounding = config.effective = config.permitted = config.inheritable = config.ambient = {
        "CAP_NET_BIND_SERVICE"};
    auto status = apply_in_child(user, capabilities::parse_capabilities(config));

    CHECK(status["error"] == "");
    CHECK(status["Uid"] == "1000\t1000\t1000\t1000");
    CHECK(status["Gid"] == "1000\t1000\t1000\t1000");
    CHECK(status["Groups"] == "2000");
    CHECK(status["Umask"] == "0027");
    CHECK(status["CapBnd"] == "0000000000000400");
    CHECK(status["CapEff"] == "0000000000000400");
    CHECK(status["CapPrm"] == "0000000000000400");
    CHECK(status["CapInh"] == "0000000000000400");
    CHECK(status["CapAmb"] == "0000000000000400");
}

TEST_CASE("capabilities: root with Docker's default set and no supplementary groups")
{
    spec::Capabilities config;
    config.bounding = {"CAP_CHOWN",  "CAP_DAC_OVERRIDE", "CAP_FSETID",       "CAP_FOWNER",
                       "CAP_MKNOD",  "CAP_NET_RAW",      "CAP_SETGID",       "CAP_SETUID",
                       "CAP_SETFCAP", "CAP_SETPCAP",     "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT",
                       "CAP_KILL",   "CAP_AUDIT_WRITE"};
    config.effective = config.permitted = config.bounding;
    auto status = apply_in_child(spec::User{}, capabilities::parse_capabilities(config));

    CHECK(status["error"] == "");
    CHECK(status["Uid"] == "0\t0\t0\t0");
    CHECK(status["Groups"] == "");
    CHECK(status["Umask"] == "0022");
    CHECK(status["CapBnd"] == "00000000a80425fb");
    CHECK(status["CapEff"] == "00000000a80425fb");
    CHECK(status["CapPrm"] == "00000000a80425fb");
    CHECK(status["CapInh"] == "0000000000000000");
    CHECK(status["CapAmb"] == "0000000000000000");
}

TEST_CASE("capabilities: no capabilities at all")
{
    auto status = apply_in_child(spec::User{1000, 1000, {}, {}}, capabilities::parse_capabilities({}));
    CHECK(status["error"] == "");
    CHECK(status["CapBnd"] == "0000000000000000");
    CHECK(status["CapPrm"] == "0000000000000000");
    CHECK(status["CapEff"] == "0000000000000000");
}

TEST_CASE("capabilities: names are checked in the parent")
{
    spec::Capabilities config;
    config.bounding = {"CAP_CHOWN", "CAP_FOO"};
    CHECK(parse_error(config) == "process.capabilities.bounding: unknown capability \"CAP_FOO\"");

    config = {};
    config.effective = {"CAP_KILL"};
    CHECK(parse_error(config) == "process.capabilities.effective: not in the permitted set: CAP_KILL");

    // Capabilities the kernel does not know are left out, as runc does.
    config = {};
    config.bounding = config.permitted = {"CAP_CHOWN", "CAP_BPF"};
    auto sets = capabilities::parse_capabilities(config, CAP_AUDIT_READ);
    CHECK(sets.bounding == 1);
    CHECK(sets.permitted == 1);
    CHECK(sets.last_cap == CAP_AUDIT_READ);

    // The kernel raises an ambient capability only when it is permitted and inheritable.
    config = {};
    config.permitted = config.ambient = {"CAP_KILL", "CAP_CHOWN"};
    config.inheritable = {"CAP_CHOWN"};
    CHECK(capabilities::parse_capabilities(config).ambient == 1);

    CHECK(capabilities::capability_name(CAP_CHECKPOINT_RESTORE) == "CAP_CHECKPOINT_RESTORE");
}

TEST_CASE("capabilities: one table, names to numbers and back")
{
    for (unsigned cap = 0; cap <= CAP_LAST_CAP; ++cap) {
        std::string_view name = capabilities::capability_name(cap);
        REQUIRE(name.rfind("CAP_", 0) == 0);
        CHECK(capabilities::capability_number(name) == cap);
    }
    CHECK(capabilities::capability_number("CAP_SYS_ADMIN") == CAP_SYS_ADMIN);
    CHECK_FALSE(capabilities::capability_number("cap_sys_admin")); // config.json spells them so
    CHECK_FALSE(capabilities::capability_number("SYS_ADMIN"));
    CHECK_FALSE(capabilities::capability_number("CAP_FOO"));
    CHECK(capabilities::capability_name(CAP_LAST_CAP + 1).empty());
    CHECK(capabilities::describe(CAP_LAST_CAP + 1) == "capability " + std::to_string(CAP_LAST_CAP + 1));
}

TEST_CASE("user: in a user namespace that denies setgroups and maps only root")
{
    auto enter_userns = [] {
        check(unshare(CLONE_NEWUSER), "unshare");
        for (auto [file, content] : {std::pair{"/proc/self/setgroups", "deny"}, {"/proc/self/uid_map", "0 0 1"},
                                     {"/proc/self/gid_map", "0 0 1"}}) {
            std::ofstream out(file);
            out << content;
        }
    };
    auto no_caps = capabilities::parse_capabilities({});

    CHECK(apply_in_child(spec::User{}, no_caps, enter_userns)["error"] == "");
    CHECK(apply_in_child(spec::User{0, 0, {}, {2000}}, no_caps, enter_userns)["error"] ==
          "process.user.additionalGids: setgroups is denied in this user namespace");
    CHECK(apply_in_child(spec::User{1000, 0, {}, {}}, no_caps, enter_userns)["error"] ==
          "setuid 1000 (not mapped in the user namespace): invalid argument");
}
