// SPDX-License-Identifier: Apache-2.0
// config.json to typed structs (spec_parse), the checks made before the host
// is touched (spec_validate), the spec's names for kernel constants
// (spec_names) and paths resolved inside a rootfs (rootfs/paths).
#include "base/error.hpp"
#include "oci/spec_default.hpp"
#include "oci/spec_names.hpp"
#include "oci/spec_parse.hpp"
#include "oci/spec_validate.hpp"
#include "rootfs/paths.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

using namespace cerberus;
using nlohmann::json;

namespace {

// The error parse throws for config, or "" when it parses.
std::string parse_error(const json& config)
{
    try {
        spec::parse(config);
    } catch (const Error& e) {
        CHECK(e.errnum() == EINVAL);
        return e.what();
    }
    return "";
}

// A config that validates against a rootfs directory: cerberus spec's.
struct Bundle : TempDir {
    json config = spec::default_config({});
    std::string rootfs() const { return path + "/rootfs"; }
    Bundle() { REQUIRE(::mkdir(rootfs().c_str(), 0755) == 0); }

    // The error validate throws for config changed by edit, or "" when it passes.
    template <typename Edit>
    std::string validate_error(Edit edit)
    {
        json changed = config;
        edit(changed);
        try {
            spec::Spec s = spec::parse(changed);
            spec::validate(s, spec::resolve_rootfs(s, path));
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    }
};

} // namespace

TEST_CASE("spec_parse: every field of a full config reaches its typed struct")
{
    json config = {
        {"ociVersion", "1.1.0"},
        {"root", {{"path", "rootfs"}, {"readonly", true}}},
        {"hostname", "h"},
        {"process",
         {{"terminal", true},
          {"consoleSize", {{"height", 24}, {"width", 80}}},
          {"user", {{"uid", 1000}, {"gid", 1001}, {"umask", 18}, {"additionalGids", {5, 6}}}},
          {"args", {"sh", "-c", "true"}},
          {"env", {"PATH=/bin"}},
          {"cwd", "/work"},
          {"capabilities", {{"bounding", {"CAP_KILL"}}, {"ambient", {"CAP_CHOWN"}}}},
          {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 512}}}},
          {"noNewPrivileges", true},
          {"oomScoreAdj", -100}}},
        {"mounts", {{{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}, {"options", {"nosuid"}}}}},
        {"hooks", {{"prestart", {{{"path", "/bin/hook"}, {"args", {"hook", "a"}}, {"timeout", 3}}}}}},
        {"annotations", {{"k", "v"}}},
        {"linux",
         {{"namespaces", {{{"type", "pid"}}, {{"type", "network"}, {"path", "/proc/1/ns/net"}}}},
          {"uidMappings", {{{"containerID", 0}, {"hostID", 100000}, {"size", 65536}}}},
          {"devices", {{{"type", "c"}, {"path", "/dev/fuse"}, {"major", 10}, {"minor", 229}, {"fileMode", 438}}}},
          {"cgroupsPath", "/c1"},
          {"resources",
           {{"memory", {{"limit", 1 << 20}, {"swappiness", 0}}},
            {"cpu", {{"shares", 512}, {"cpus", "0-1"}}},
            {"pids", {{"limit", 64}}},
            {"devices", {{{"allow", false}, {"access", "rwm"}}}},
            {"unified", {{"io.weight", "100"}}}}},
          {"sysctl", {{"net.ipv4.ip_forward", "1"}}},
          {"seccomp",
           {{"defaultAction", "SCMP_ACT_ERRNO"},
            {"syscalls", {{{"names", {"read"}}, {"action", "SCMP_ACT_ALLOW"},
                           {"args", {{{"index", 0}, {"value", 1}, {"op", "SCMP_CMP_EQ"}}}}}}}}}}},
    };
    spec::Spec s = spec::parse(config);
    CHECK(s.oci_version == "1.1.0");
    CHECK(s.root.path == "rootfs");
    CHECK(s.root.readonly);
    CHECK(s.hostname == "h");
    REQUIRE(s.process);
    const spec::Process& p = *s.process;
    CHECK(p.terminal);
    CHECK(p.console_size->width == 80);
    CHECK(p.user.uid == 1000);
    CHECK(p.user.gid == 1001);
    CHECK(p.user.umask == 18);
    CHECK(p.user.additional_gids == std::vector<uint32_t>{5, 6});
    CHECK(p.args == std::vector<std::string>{"sh", "-c", "true"});
    CHECK(p.cwd == "/work");
    CHECK(p.capabilities->bounding == std::vector<std::string>{"CAP_KILL"});
    CHECK(p.capabilities->effective.empty());
    CHECK(p.rlimits.at(0).soft == 512);
    CHECK(p.no_new_privileges);
    CHECK(p.oom_score_adj == -100);
    CHECK(s.mounts.at(0).options == std::vector<std::string>{"nosuid"});
    CHECK(s.hooks->prestart.at(0).args == std::vector<std::string>{"hook", "a"});
    CHECK(s.hooks->prestart.at(0).timeout == 3);
    CHECK(s.annotations.at("k") == "v");
    REQUIRE(s.linux);
    CHECK(s.find_namespace("network")->path == "/proc/1/ns/net");
    CHECK(s.find_namespace("pid")->path.empty());
    CHECK_FALSE(s.find_namespace("user"));
    CHECK(s.linux->uid_mappings.at(0).host_id == 100000);
    CHECK(s.linux->devices.at(0).file_mode == 438u);
    CHECK(s.linux->resources->memory->limit == 1 << 20);
    CHECK(s.linux->resources->cpu->cpus == "0-1");
    CHECK(s.linux->resources->pids_limit == 64);
    CHECK_FALSE(s.linux->resources->devices.at(0).allow);
    CHECK(s.linux->resources->unified.at("io.weight") == "100");
    CHECK(s.linux->sysctl.at("net.ipv4.ip_forward") == "1");
    CHECK(s.linux->seccomp->syscalls.at(0).args.at(0).op == "SCMP_CMP_EQ");
}

TEST_CASE("spec_parse: absent and null members keep their defaults")
{
    spec::Spec s = spec::parse({{"process", {{"args", {"true"}}, {"user", nullptr}, {"cwd", nullptr}}}});
    CHECK(s.process->cwd == "/");
    CHECK(s.process->user.uid == 0);
    CHECK_FALSE(s.process->capabilities);
    CHECK_FALSE(s.linux);
    CHECK_FALSE(s.hooks);
}

TEST_CASE("spec_parse: a wrong type names the JSON path of the field")
{
    CHECK(parse_error(json::array()) == "config.json: expected a JSON object");
    CHECK(parse_error({{"ociVersion", 1}}) == "ociVersion: expected a string");
    CHECK(parse_error({{"process", {{"user", {{"uid", "0"}}}}}}) == "process.user.uid: expected an integer");
    CHECK(parse_error({{"process", {{"user", {{"uid", -1}}}}}}) == "process.user.uid: value -1 is out of range");
    CHECK(parse_error({{"process", {{"user", {{"uid", 4294967296}}}}}}) ==
          "process.user.uid: value 4294967296 is out of range");
    CHECK(parse_error({{"process", {{"args", {"sh", 1}}}}}) == "process.args[1]: expected a string");
    CHECK(parse_error({{"process", {{"args", "sh"}}}}) == "process.args: expected an array");
    CHECK(parse_error({{"process", {{"terminal", "yes"}}}}) == "process.terminal: expected a boolean");
    CHECK(parse_error({{"process", {{"rlimits", {1}}}}}) == "process.rlimits[0]: expected an object");
    CHECK(parse_error({{"annotations", {{"a", 1}}}}) == "annotations.a: expected a string");
    CHECK(parse_error({{"linux", {{"namespaces", {{{"type", 3}}}}}}}) == "linux.namespaces[0].type: expected a string");
    CHECK(parse_error({{"linux", {{"resources", {{"memory", {{"limit", 1.5}}}}}}}}) ==
          "linux.resources.memory.limit: expected an integer");
    CHECK(parse_error({{"hooks", {{"poststop", {{{"path", "/x"}, {"timeout", "1"}}}}}}}) ==
          "hooks.poststop[0].timeout: expected an integer");
}

TEST_CASE("spec_parse: hooks go back to config.json's form and parse the same")
{
    spec::Hooks hooks;
    hooks.create_runtime = {{"/bin/a", {}, {}, std::nullopt}};
    hooks.poststop = {{"/bin/b", {"b", "1"}, {"X=1"}, 7}};
    json j = spec::hooks_json(hooks);
    CHECK(j == json::parse(R"({"createRuntime": [{"path": "/bin/a"}],
                                "poststop": [{"path": "/bin/b", "args": ["b", "1"], "env": ["X=1"], "timeout": 7}]})"));
    spec::Hooks back = spec::parse_hooks(j);
    CHECK(back.create_runtime.at(0).path == "/bin/a");
    CHECK(back.poststop.at(0).args == hooks.poststop[0].args);
    CHECK(back.poststop.at(0).env == hooks.poststop[0].env);
    CHECK(back.poststop.at(0).timeout == 7);
    CHECK(back.prestart.empty());
    CHECK(spec::hooks_json({}) == json::object());
    CHECK_THROWS_WITH_AS(spec::parse_hooks({{"poststart", {{{"path", 1}}}}}), "hooks.poststart[0].path: expected a string",
                         Error);
}

TEST_CASE("spec_parse: load_bundle names the file in every error")
{
    TempDir dir;
    CHECK_THROWS_WITH_AS(spec::load_bundle(dir.path),
                         ("open " + dir.path + "/config.json: no such file or directory").c_str(), Error);
    std::ofstream(dir.path + "/config.json") << "{";
    CHECK_THROWS_WITH_AS(spec::load_bundle(dir.path), doctest::Contains((dir.path + "/config.json: invalid JSON").c_str()),
                         Error);
    std::ofstream(dir.path + "/config.json") << R"({"process": {"cwd": 1}})";
    CHECK_THROWS_WITH_AS(spec::load_bundle(dir.path), (dir.path + "/config.json: process.cwd: expected a string").c_str(),
                         Error);
    std::ofstream(dir.path + "/config.json") << spec::default_config({}).dump();
    CHECK(spec::load_bundle(dir.path).process->args == std::vector<std::string>{"sh"});
}

// Found by tests/fuzz (target config): a number too large to hold escaped load_bundle as
// nlohmann's own exception instead of an error naming the file.
TEST_CASE("spec_parse: a config.json number too large to hold is refused, naming the file")
{
    TempDir dir;
    auto load = [&](const std::string& text) -> std::string {
        std::ofstream(dir.path + "/config.json", std::ios::trunc) << text;
        try {
            spec::load_bundle(dir.path);
        } catch (const Error& e) {
            CHECK(e.errnum() == EINVAL);
            return e.what();
        }
        return "loaded";
    };
    CHECK(load(R"({"ociVersion": "1.0.2", "process": {"user": {"uid": 1)" + std::string(400, '0') + "}}}")
              .rfind(dir.path + "/config.json: invalid JSON", 0) == 0);
    CHECK(load(R"({"ociVersion": 7.9E9200})").rfind(dir.path + "/config.json: invalid JSON", 0) == 0);
    CHECK(load(R"({"ociVersion": "1.0.2"})") == "loaded"); // control
}

TEST_CASE("spec_validate: cerberus spec's config passes, and each check names its field")
{
    Bundle b;
    CHECK(b.validate_error([](json&) {}) == ""); // the control: nothing to refuse
    CHECK(b.validate_error([](json& c) { c.erase("ociVersion"); }) == "ociVersion: is missing");
    CHECK(b.validate_error([](json& c) { c["ociVersion"] = "2.0.0"; }) == "ociVersion: unsupported version \"2.0.0\"");
    CHECK(b.validate_error([](json& c) { c["root"].erase("path"); }) == "root.path: is missing");
    CHECK(b.validate_error([](json& c) { c["root"]["path"] = "nowhere"; }) ==
          "root.path: " + b.path + "/nowhere: no such file or directory");
    std::ofstream(b.path + "/file") << "";
    CHECK(b.validate_error([](json& c) { c["root"]["path"] = "file"; }) ==
          "root.path: " + b.path + "/file is not a directory");
    CHECK(b.validate_error([](json& c) { c.erase("process"); }) == "process: is missing");
    CHECK(b.validate_error([](json& c) { c["process"]["args"] = json::array(); }) ==
          "process.args: must name the program to run");
    CHECK(b.validate_error([](json& c) { c["process"]["cwd"] = "work"; }) ==
          "process.cwd: must be an absolute path, got \"work\"");
    CHECK(b.validate_error([](json& c) { c["process"]["env"] = {"PATH=/bin", "oops"}; }) ==
          "process.env[1]: expected KEY=VALUE, got \"oops\"");
    auto rlimit = [](const char* type, int soft, int hard) {
        return json{{"type", type}, {"soft", soft}, {"hard", hard}};
    };
    CHECK(b.validate_error([&](json& c) { c["process"]["rlimits"] = {rlimit("RLIMIT_FOO", 1, 1)}; }) ==
          "process.rlimits[0].type: unknown rlimit \"RLIMIT_FOO\"");
    CHECK(b.validate_error([&](json& c) {
        c["process"]["rlimits"] = {rlimit("RLIMIT_NOFILE", 1, 1), rlimit("RLIMIT_NOFILE", 2, 2)};
    }) == "process.rlimits[1].type: duplicate rlimit \"RLIMIT_NOFILE\"");
    CHECK(b.validate_error([&](json& c) { c["process"]["rlimits"] = {rlimit("RLIMIT_NOFILE", 2, 1)}; }) ==
          "process.rlimits[0]: soft limit 2 exceeds hard limit 1");
    CHECK(b.validate_error([](json& c) { c.erase("linux"); }) == "linux: is missing");
    CHECK(b.validate_error([](json& c) { c["mounts"] = {{{"type", "tmpfs"}}}; }) == "mounts[0].destination: is missing");
    CHECK(b.validate_error([](json& c) { c["mounts"] = {{{"destination", "/a/../b"}}}; }) ==
          "mounts[0].destination: must not contain \"..\": \"/a/../b\"");
    CHECK(b.validate_error([](json& c) { c["hooks"] = {{"poststop", {{{"path", "hook"}}}}}; }) ==
          "hooks.poststop[0].path: must be an absolute path, got \"hook\"");
    CHECK(b.validate_error([](json& c) { c["hooks"] = {{"createRuntime", {{{"path", "/h"}, {"timeout", 0}}}}}; }) ==
          "hooks.createRuntime[0].timeout: must be positive");
}

TEST_CASE("spec_validate: linux: namespaces, id mappings, devices, propagation, sysctl")
{
    Bundle b;
    CHECK(b.validate_error([](json& c) { c["linux"]["namespaces"].push_back({{"type", "foo"}}); }).find(
              ".type: unknown namespace \"foo\"") != std::string::npos);
    CHECK(b.validate_error([](json& c) { c["linux"]["namespaces"].push_back({{"type", "pid"}}); }).find(
              ".type: duplicate namespace \"pid\"") != std::string::npos);
    auto with_net_path = [&](const char* path) {
        return b.validate_error([&](json& c) {
            c["linux"]["namespaces"] = {{{"type", "mount"}}, {{"type", "uts"}}, {{"type", "network"}, {"path", path}}};
        });
    };
    CHECK(with_net_path("/proc/self/ns/net") == "");
    CHECK(with_net_path("proc/self/ns/net") == "linux.namespaces[2].path: must be absolute, got \"proc/self/ns/net\"");
    CHECK(with_net_path("/nonexistent/ns") == "linux.namespaces[2].path: /nonexistent/ns: no such file or directory");

    CHECK(b.validate_error([](json& c) { c["linux"]["namespaces"].push_back({{"type", "user"}}); }) ==
          "linux.uidMappings: a new user namespace needs uidMappings and gidMappings");
    CHECK(b.validate_error([](json& c) {
        c["linux"]["uidMappings"] = {{{"containerID", 0}, {"hostID", 1000}, {"size", 1}}};
    }) == "linux.uidMappings: id mappings need a new user namespace");
    CHECK(b.validate_error([](json& c) {
        c["linux"]["namespaces"] = {{{"type", "mount"}}};
        c["hostname"] = "h";
    }) == "hostname: setting the hostname needs a uts namespace");

    CHECK(b.validate_error([](json& c) { c["linux"]["devices"] = {{{"type", "x"}, {"path", "/dev/x"}}}; }) ==
          "linux.devices[0].type: unknown device type \"x\"");
    CHECK(b.validate_error([](json& c) { c["linux"]["devices"] = {{{"type", "c"}, {"path", "/dev/../etc/x"}}}; }) ==
          "linux.devices[0].path: must be an absolute path inside /dev, got \"/dev/../etc/x\"");
    CHECK(b.validate_error([](json& c) { c["linux"]["rootfsPropagation"] = "sideways"; }) ==
          "linux.rootfsPropagation: unknown propagation \"sideways\"");
    CHECK(b.validate_error([](json& c) { c["linux"]["rootfsPropagation"] = "rslave"; }) == "");
    CHECK(b.validate_error([](json& c) { c["linux"]["sysctl"] = {{"../../etc", "1"}}; }) ==
          "linux.sysctl: bad key \"../../etc\"");
    CHECK(b.validate_error([](json& c) { c["linux"]["sysctl"] = {{"net.ipv4.ip_forward", "1"}}; }) == "");
}

TEST_CASE("spec_validate: root.path resolves against the bundle unless absolute")
{
    spec::Spec s;
    s.root.path = "rootfs";
    CHECK(spec::resolve_rootfs(s, "/b") == "/b/rootfs");
    s.root.path = "/abs/rootfs";
    CHECK(spec::resolve_rootfs(s, "/b") == "/abs/rootfs");
    s.root.path = "";
    CHECK_THROWS_WITH_AS(spec::resolve_rootfs(s, "/b"), "root.path: is missing", Error);
}

TEST_CASE("spec_names: namespaces in joining order, with their flags and /proc names")
{
    std::vector<std::string> order;
    for (const auto& kind : spec::namespace_kinds())
        order.push_back(kind.type);
    CHECK(order == std::vector<std::string>{"user", "mount", "network", "ipc", "uts", "cgroup", "pid", "time"});
    CHECK(spec::namespace_clone_flag("network") == CLONE_NEWNET);
    CHECK(spec::namespace_clone_flag("mount") == CLONE_NEWNS);
    CHECK(spec::namespace_clone_flag("user") == CLONE_NEWUSER);
    CHECK_FALSE(spec::namespace_clone_flag("net"));
    CHECK(spec::namespace_proc_name("network") == "net");
    CHECK(spec::namespace_proc_name("mount") == "mnt");
    CHECK(spec::namespace_proc_name("pid") == "pid");
    CHECK(spec::rlimit_resource("RLIMIT_NOFILE") == RLIMIT_NOFILE);
    CHECK(spec::rlimit_resource("RLIMIT_RTTIME") == RLIMIT_RTTIME);
    CHECK_FALSE(spec::rlimit_resource("NOFILE"));
    CHECK_FALSE(spec::rlimit_resource("rlimit_nofile"));
}

namespace {

// What an fd is open on, as a path below the test's root.
std::string below(const std::string& root, const UniqueFd& fd)
{
    std::string path = paths::of_fd(fd.get());
    return path.compare(0, root.size(), root) == 0 ? path.substr(root.size()) : "outside: " + path;
}

} // namespace

TEST_CASE("rootfs/paths: open and make resolve every symlink as if the root were /")
{
    TempDir root, outside;
    const std::string& r = root.path;
    REQUIRE(::mkdir((r + "/etc").c_str(), 0755) == 0);
    REQUIRE(::mkdir((r + "/var").c_str(), 0755) == 0);
    REQUIRE(::symlink("/etc", (r + "/abs").c_str()) == 0);           // absolute: inside the root
    REQUIRE(::symlink("../../../../etc", (r + "/var/up").c_str()) == 0); // climbs no higher than the root
    REQUIRE(::symlink("run", (r + "/var/lock").c_str()) == 0);       // relative, to what does not exist yet
    REQUIRE(::symlink(outside.path.c_str(), (r + "/host").c_str()) == 0); // a host directory, by its host path
    REQUIRE(::symlink("loop2", (r + "/loop1").c_str()) == 0);
    REQUIRE(::symlink("loop1", (r + "/loop2").c_str()) == 0);
    UniqueFd fd(::open(r.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));

    CHECK(below(r, paths::open(fd.get(), "/etc", O_PATH)) == "/etc");
    CHECK(below(r, paths::open(fd.get(), "/abs", O_PATH)) == "/etc");
    CHECK(below(r, paths::open(fd.get(), "/var/up", O_PATH)) == "/etc");
    CHECK_FALSE(paths::open(fd.get(), "/new", O_PATH));
    CHECK(errno == ENOENT);
    CHECK(below(r, paths::make(fd.get(), "etc//./passwd", paths::Leaf::file)) == "/etc/passwd");
    CHECK(below(r, paths::make(fd.get(), "/abs/dir/sub", paths::Leaf::directory)) == "/etc/dir/sub");
    CHECK(below(r, paths::make(fd.get(), "/var/up/shadow", paths::Leaf::file)) == "/etc/shadow");
    CHECK(below(r, paths::make(fd.get(), "/var/lock/file", paths::Leaf::file)) == "/var/run/file");
    CHECK(below(r, paths::make(fd.get(), "/host/made", paths::Leaf::directory)) == outside.path + "/made");
    CHECK(below(r, paths::make(fd.get(), "/", paths::Leaf::directory)) == "");
    CHECK(::access((outside.path + "/made").c_str(), F_OK) != 0); // nothing made on the host
    CHECK_THROWS_WITH_AS(paths::make(fd.get(), "/loop1/x", paths::Leaf::directory), doctest::Contains("symbolic links"),
                         Error);
    // Through no symlink at all: a symlink anywhere on the way is refused, not followed.
    CHECK_THROWS_AS(paths::make(fd.get(), "/abs/x", paths::Leaf::directory, paths::no_symlinks), Error);
    CHECK_THROWS_AS(paths::make(fd.get(), "/var/lock/y", paths::Leaf::directory, paths::no_symlinks), Error);
    CHECK(below(r, paths::make(fd.get(), "/etc/z", paths::Leaf::directory, paths::no_symlinks)) == "/etc/z");
    CHECK(paths::clean("a//b/./c/") == "/a/b/c");
    CHECK(paths::clean("/") == "/");
}
