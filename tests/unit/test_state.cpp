// SPDX-License-Identifier: Apache-2.0
// The container's state on disk and the state machine every operation checks
// first: what each status allows, the one refusal, the store and its files.
#include "container/state.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <thread>

using namespace cerberus;
using state::Operation;
using state::Status;

namespace {

constexpr Status all_statuses[] = {Status::creating, Status::created, Status::running, Status::paused,
                                   Status::stopped};
constexpr Operation all_operations[] = {Operation::start,  Operation::kill, Operation::pause, Operation::resume,
                                        Operation::update, Operation::remove, Operation::exec, Operation::watch};

// The statuses in which op is allowed.
std::vector<Status> allowed(Operation op)
{
    std::vector<Status> out;
    for (Status s : all_statuses)
        if (state::allows(s, op))
            out.push_back(s);
    return out;
}

std::string refusal_text(Operation op, Status s)
{
    return state::refusal(op, s, "c1").what();
}

} // namespace

TEST_CASE("state machine: what each status allows (runc's rules)")
{
    using V = std::vector<Status>;
    CHECK(allowed(Operation::start) == V{Status::created});
    CHECK(allowed(Operation::kill) == V{Status::created, Status::running, Status::paused});
    CHECK(allowed(Operation::pause) == V{Status::created, Status::running});
    CHECK(allowed(Operation::resume) == V{Status::paused});
    CHECK(allowed(Operation::update) == V{Status::created, Status::running, Status::paused});
    CHECK(allowed(Operation::remove) == V{Status::created, Status::stopped});
    CHECK(allowed(Operation::exec) == V{Status::created, Status::running});
    CHECK(allowed(Operation::watch) == V{Status::creating, Status::created, Status::running, Status::paused});
    // Nothing but a delete --force (or kill --all) acts on a container being created.
    for (Operation op : all_operations)
        if (op != Operation::watch)
            CHECK_FALSE(state::allows(Status::creating, op));
}

TEST_CASE("state machine: the refusal keeps runc's words where engines match on them")
{
    CHECK(refusal_text(Operation::start, Status::stopped) == "cannot start a container that has stopped");
    CHECK(refusal_text(Operation::start, Status::running) == "cannot start an already running container");
    CHECK(refusal_text(Operation::start, Status::paused) == "cannot start a container in the paused state");
    CHECK(refusal_text(Operation::kill, Status::stopped) == "container not running");
    CHECK(refusal_text(Operation::pause, Status::paused) == "container not running");
    CHECK(refusal_text(Operation::update, Status::stopped) == "container not running");
    CHECK(refusal_text(Operation::resume, Status::running) == "container not paused");
    CHECK(refusal_text(Operation::remove, Status::running) == "cannot delete container c1 that is not stopped: running");
    CHECK(refusal_text(Operation::exec, Status::stopped) == "cannot exec in a stopped container");
    CHECK(refusal_text(Operation::exec, Status::paused) ==
          "cannot exec in a paused container (use --ignore-paused to override)");
    CHECK(refusal_text(Operation::exec, Status::creating) == "cannot exec in a container that is being created");
    CHECK(refusal_text(Operation::watch, Status::stopped) == "container with id c1 is not running");
}

TEST_CASE("state machine: the same status gives the same errno in every operation")
{
    for (Status s : all_statuses)
        for (Operation op : all_operations)
            CHECK(state::refusal(op, s, "c1").errnum() == (s == Status::stopped ? ESRCH : EBUSY));
}

TEST_CASE("state store: a container's directory, its state and exec.fifo")
{
    TempDir root;
    state::Store store(root.path + "/state");
    CHECK(store.list().empty()); // the root is made on first create
    state::ContainerDir dir = store.create("c1");
    CHECK_THROWS_WITH_AS(store.create("c1"), "container \"c1\" already exists", Error);

    state::ContainerState s;
    s.id = "c1";
    s.bundle = "/b";
    s.rootfs = "/b/rootfs";
    s.oci_version = "1.1.0";
    s.created = state::rfc3339_now();
    s.annotations = {{"a", "b"}};
    s.cgroup_path = "/x/c1";
    s.hooks.poststart = {{"/bin/true", {"true", "x"}, {"A=1"}, 5}};
    s.hooks.poststop = {{"/bin/false", {}, {}, std::nullopt}};
    s.forced = {.no_new_privileges = true,
                .forbidden_capabilities = (1ULL << 21) | (1ULL << 13),
                .default_env = {"REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt"}};
    dir.save(s);

    // Opening it to read must not wait for the lock the creator holds.
    state::ContainerState loaded = store.open("c1", state::Store::Access::read).load();
    CHECK(loaded.id == "c1");
    CHECK(loaded.annotations == s.annotations);
    CHECK(loaded.creating);
    REQUIRE(loaded.hooks.poststart.size() == 1);
    CHECK(loaded.hooks.poststart[0].path == "/bin/true");
    CHECK(loaded.hooks.poststart[0].args == std::vector<std::string>{"true", "x"});
    CHECK(loaded.hooks.poststart[0].env == std::vector<std::string>{"A=1"});
    CHECK(loaded.hooks.poststart[0].timeout == 5);
    REQUIRE(loaded.hooks.poststop.size() == 1);
    CHECK_FALSE(loaded.hooks.poststop[0].timeout);
    CHECK(loaded.forced.no_new_privileges);
    CHECK(loaded.forced.forbidden_capabilities == s.forced.forbidden_capabilities);
    CHECK(loaded.forced.default_env == s.forced.default_env);
    // Hooks are kept in config.json's own form, not as a string inside the state.
    std::ifstream file(root.path + "/state/c1/state.json");
    std::string text((std::istreambuf_iterator<char>(file)), {});
    CHECK(text.find(R"("poststart":[{"args":["true","x"],"env":["A=1"],"path":"/bin/true","timeout":5}])") !=
          std::string::npos);
    CHECK(text.find(R"("forbiddenCapabilities":["CAP_NET_RAW","CAP_SYS_ADMIN"])") != std::string::npos);

    CHECK_FALSE(dir.has_exec_fifo());
    UniqueFd fifo = dir.make_exec_fifo();
    CHECK(fifo);
    struct stat st;
    REQUIRE(::stat(dir.fifo_path().c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));
    CHECK((st.st_mode & 0777) == 0622); // the init opens it after it has changed its user
    CHECK(dir.has_exec_fifo());

    CHECK(store.list() == std::vector<std::string>{"c1"});
    dir.remove();
    CHECK(store.list().empty());
    CHECK_THROWS_WITH_AS(store.open("c1"), "\"c1\": container does not exist", Error);
}

TEST_CASE("state store: a damaged state file is an error naming the file")
{
    TempDir root;
    state::Store store(root.path);
    state::ContainerDir dir = store.create("c1");
    std::ofstream(dir.path() + "/state.json") << R"({"id": "c1"})";
    CHECK_THROWS_WITH_AS(store.open("c1", state::Store::Access::read).load(),
                         doctest::Contains((dir.path() + "/state.json: ").c_str()), Error);
}

TEST_CASE("state store: one process at a time modifies a container")
{
    TempDir root;
    state::Store store(root.path);
    std::optional<state::ContainerDir> held = store.create("c1");
    state::ContainerState s;
    s.id = "c1";
    held->save(s);
    bool opened = false;
    std::thread other([&] {
        store.open("c1"); // waits for the lock
        opened = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK_FALSE(opened);
    held.reset();
    other.join();
    CHECK(opened);
}

TEST_CASE("state store: container ids are runc's")
{
    for (const char* id : {"a", "A-b_c.d+e", "0"})
        CHECK_NOTHROW(state::validate_id(id));
    for (const char* id : {"", ".", "..", "a/b", "a b", "../x", "a\n"})
        CHECK_THROWS_AS(state::validate_id(id), Error);
    CHECK_THROWS_AS(state::validate_id(std::string(1025, 'a')), Error);
}

TEST_CASE("state: the status is derived from the process and exec.fifo")
{
    TempDir root;
    state::Store store(root.path);
    state::ContainerDir dir = store.create("c1");
    state::ContainerState s;
    s.pid = ::getpid();
    s.pid_start_time = state::process_start_time(s.pid);
    CHECK(s.pid_start_time > 0);
    CHECK(state::current_status(s, dir) == Status::creating);
    s.creating = false;
    CHECK(state::current_status(s, dir) == Status::running);
    UniqueFd fifo = dir.make_exec_fifo();
    CHECK(state::current_status(s, dir) == Status::created);
    s.pid_start_time += 1; // the pid now names another process
    CHECK_FALSE(state::process_matches(s));
    CHECK(state::current_status(s, dir) == Status::stopped);
    CHECK(state::process_start_time(0) == 0);
}

TEST_CASE("state: the runtime-spec state JSON")
{
    state::ContainerState s;
    s.id = "c1";
    s.bundle = "/b";
    s.oci_version = "1.1.0";
    s.pid = 42;
    CHECK(state::oci_state_json(s, Status::running) ==
          R"({"bundle":"/b","id":"c1","ociVersion":"1.1.0","pid":42,"status":"running"})");
    s.annotations = {{"k", "v"}};
    CHECK(state::oci_state_json(s, Status::stopped) ==
          R"({"annotations":{"k":"v"},"bundle":"/b","id":"c1","ociVersion":"1.1.0","pid":0,"status":"stopped"})");
}
