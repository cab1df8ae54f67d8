// SPDX-License-Identifier: Apache-2.0
// The host daemons' protocol (base/daemon): a client waits as long as the
// daemon says it is still at work, and no longer than its timeout of silence;
// listening() tells a daemon that holds its lock and socket from one that
// does not; a tick reads only the registrations it does not serve.
#include "base/daemon.hpp"
#include "base/error.hpp"
#include "base/served_containers.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <poll.h>
#include <sys/epoll.h>

#include <chrono>
#include <set>
#include <thread>

using namespace cerberus;

namespace {

// A daemon in a thread of the test: it takes the lock, listens and answers
// one request with answer.
struct TestDaemon {
    daemon::Daemon daemon;
    UniqueFd lock, epoll, listener;
    std::thread thread;

    TestDaemon(const std::string& dir,
               std::function<std::string(const std::string&, const daemon::StillWorking&)> answer)
        : daemon{dir, "test", "unused", "the test daemon"}
    {
        lock = daemon::open_lock(daemon);
        REQUIRE(daemon::take_lock(daemon, lock.get()));
        epoll.reset(epoll_create1(EPOLL_CLOEXEC));
        listener = daemon::listen(daemon, epoll.get(), {.u32 = 0});
        thread = std::thread([this, answer] {
            pollfd request{listener.get(), POLLIN, 0};
            if (poll(&request, 1, 10000) == 1)
                daemon::answer_request(listener.get(),
                                       [&](const std::string& request, UniqueFd, const daemon::StillWorking& still_working) {
                                           return answer(request, still_working);
                                       });
        });
    }
    ~TestDaemon() { thread.join(); }
};

} // namespace

TEST_CASE("daemon: ask waits while the daemon says it is still working, and gives up after a silence")
{
    TempDir dir;
    using namespace std::chrono_literals;
    SUBCASE("2.5 s of work, a word every half second, a 1 s timeout: the answer comes")
    {
        TestDaemon server(dir.path, [](const std::string& request, const daemon::StillWorking& still_working) {
            for (int i = 0; i < 5; ++i) {
                std::this_thread::sleep_for(500ms);
                still_working();
            }
            return "done " + request;
        });
        CHECK(daemon::ask(server.daemon, "finish 7", 1) == "done finish 7");
    }
    SUBCASE("control: 2 s of silence, a 1 s timeout: the client gives up")
    {
        TestDaemon server(dir.path, [](const std::string&, const daemon::StillWorking&) {
            std::this_thread::sleep_for(2s);
            return std::string("too late");
        });
        CHECK_THROWS_AS(daemon::ask(server.daemon, "finish 7", 1), Error);
    }
}

TEST_CASE("daemon: listening() only while a daemon holds the lock and has its socket")
{
    TempDir dir;
    daemon::Daemon none{dir.path, "test", "unused", "the test daemon"};
    CHECK_FALSE(daemon::listening(none));
    {
        TestDaemon server(dir.path, [](const std::string&, const daemon::StillWorking&) { return std::string("ok"); });
        CHECK(daemon::listening(server.daemon));
        CHECK(daemon::ask(server.daemon, "ping", 1) == "ok");
        server.lock.reset(); // a dead daemon's socket stays behind, its lock goes
        CHECK_FALSE(daemon::listening(server.daemon));
    }
}

TEST_CASE("daemon: a tick reads the registrations of the containers not served yet, and only those")
{
    TempDir dir;
    daemon::write_registration_file(dir.path, 7, {{"cgroup_id", 7}});
    daemon::write_registration_file(dir.path, 8, {{"cgroup_id", 8}});
    auto ids = [](const std::vector<nlohmann::json>& documents) {
        std::set<uint64_t> out;
        for (const auto& document : documents)
            out.insert(document.at("cgroup_id").get<uint64_t>());
        return out;
    };
    std::string containers = dir.path + "/containers";
    CHECK(ids(daemon::registration_documents(containers)) == std::set<uint64_t>{7, 8}); // control: every one
    CHECK(ids(daemon::registration_documents(containers, [](uint64_t id) { return id == 7; })) ==
          std::set<uint64_t>{8});
}
