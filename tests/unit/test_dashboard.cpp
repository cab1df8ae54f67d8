// SPDX-License-Identifier: Apache-2.0
// The dashboard's pieces that need no browser: the listen address and token
// rules, and the hub following trails (a temporary audit dir).
#include "audit/dashboard_hub.hpp"
#include "base/error.hpp"
#include "dashboard/dashboard_assets.hpp"
#include "dashboard/dashboard_server.hpp"

#include <doctest/doctest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

using namespace cerberus;
using namespace cerberus::dashboard;
using cerberus::audit::DashboardHub;

TEST_CASE("dashboard: --listen takes numeric addresses and knows loopback from the rest")
{
    auto v4 = parse_listen("127.0.0.1:7070");
    CHECK(v4.host == "127.0.0.1");
    CHECK(v4.port == 7070);
    CHECK(v4.loopback);
    CHECK(parse_listen("127.3.4.5:80").loopback);
    CHECK(parse_listen("[::1]:7070").loopback);
    CHECK(parse_listen("[::1]:7070").host == "::1");
    CHECK_FALSE(parse_listen("0.0.0.0:7070").loopback);
    CHECK_FALSE(parse_listen("[::]:7070").loopback);
    CHECK_FALSE(parse_listen("192.0.2.1:7070").loopback);
    for (const char* bad : {"7070", "localhost:7070", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:x", ":7070"})
        CHECK_THROWS_AS(parse_listen(bad), Error);
}

TEST_CASE("dashboard: a non-loopback address needs a token, and a token is long enough")
{
    CHECK_THROWS_AS(serve_dashboard({.listen = "0.0.0.0:7070", .audit_dir = "/nonexistent"}), Error);
    CHECK_THROWS_AS(serve_dashboard({.listen = "127.0.0.1:7070", .audit_dir = "/x", .token = "short"}), Error);
}

TEST_CASE("dashboard: tokens compare whole")
{
    CHECK(tokens_equal("0123456789abcdef", "0123456789abcdef"));
    CHECK_FALSE(tokens_equal("0123456789abcdeF", "0123456789abcdef"));
    CHECK_FALSE(tokens_equal("0123456789abcde", "0123456789abcdef"));
    CHECK_FALSE(tokens_equal("0123456789abcdef0", "0123456789abcdef"));
    CHECK_FALSE(tokens_equal("", "0123456789abcdef"));
    CHECK_FALSE(tokens_equal("", ""));
}

TEST_CASE("dashboard: the page, its script and style sheet are in the binary, nothing else is")
{
    auto page = dashboard_asset("index.html");
    REQUIRE(page);
    CHECK(page->content.find("<script src=\"/app.js\"") != std::string_view::npos);
    CHECK(std::string(page->content_type).rfind("text/html", 0) == 0);
    REQUIRE(dashboard_asset("app.js"));
    // The script never puts trail text in the page as markup.
    CHECK(dashboard_asset("app.js")->content.find("innerHTML") == std::string_view::npos);
    CHECK(dashboard_asset("app.css"));
    CHECK_FALSE(dashboard_asset("../CMakeLists.txt"));
    // No asset names another origin (the SVG namespace is a name, not a place to load from).
    for (const char* name : {"index.html", "app.js", "app.css"}) {
        std::string content(dashboard_asset(name)->content);
        for (const char* scheme : {"http:", "https:"}) // "http" alone is a record type's name
            for (size_t at = 0; (at = content.find(scheme, at)) != std::string::npos; ++at)
                CHECK_MESSAGE(content.compare(at, 26, "http://www.w3.org/2000/svg") == 0,
                              name << ": " << content.substr(at, 40));
        CHECK(content.find("url(") == std::string::npos);
    }
}

TEST_CASE("dashboard: the hub counts a trail's records and hands new ones to waiters")
{
    char dir_template[] = "/tmp/cerberus-hub-XXXXXX";
    REQUIRE(mkdtemp(dir_template));
    std::string dir = dir_template;
    std::string trail = dir + "/agent-9.jsonl";
    auto append = [&](const std::string& line) { std::ofstream(trail, std::ios::app) << line << "\n"; };
    append(R"({"type":"start","time":"2024-05-01T12:03:00.000000000Z","id":"agent-9","enforcement":"bpf-lsm","mode":"enforce","policy":{"mode":"enforce","allowed_hosts":[]}})");
    append(R"({"type":"denial","time":"2024-05-01T12:03:04.000000000Z","id":"agent-9","op":"connect","target":"203.0.113.9:443","verdict":"denied"})");
    std::vector<std::string> asked; // the live containers whose status the hub asked for
    DashboardHub hub(dir, [&](const std::string& root, const std::string& id) {
        asked.push_back(root + " " + id);
        return std::string("running");
    });
    hub.start();
    auto containers = hub.containers();
    auto mine = std::find_if(containers.begin(), containers.end(), [](const auto& c) { return c["id"] == "agent-9"; });
    REQUIRE(mine != containers.end());
    CHECK((*mine)["status"] == "deleted"); // no registry entry: a past run, whose status is not asked for
    CHECK(std::find(asked.begin(), asked.end(), " agent-9") == asked.end());
    CHECK((*mine)["denials"] == 1);
    CHECK((*mine)["enforcement"] == "bpf-lsm");
    CHECK((*mine)["policy"]["allowed_hosts"] == nlohmann::json::array());
    uint64_t seq = hub.last_seq();
    append(R"({"type":"denial","time":"2024-05-01T12:03:05.000000000Z","id":"agent-9","op":"open","target":"/x","verdict":"audit"})");
    append("{\"type\":\"denial\",\"id\":\"agent-9\"");  // a line still being written: not yet
    auto records = hub.wait_records(seq, std::chrono::seconds(5));
    REQUIRE(records.size() == 1);
    CHECK(records[0].line.find("\"/x\"") != std::string::npos);
    CHECK(hub.trail("agent-9", 10)->at("total") == 3);
    CHECK_FALSE(hub.trail("nobody", 10));
    hub.stop();
    CHECK(hub.wait_records(hub.last_seq(), std::chrono::seconds(5)).empty()); // returns at once once stopped
    std::filesystem::remove_all(dir);
}
