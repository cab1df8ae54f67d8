// SPDX-License-Identifier: Apache-2.0
// The egress proxy (egress/egress_proxy.hpp) between a real OpenSSL client and
// a real HTTPS server on 127.0.0.1: the handshake admitted by its server name,
// each request decided by allowed_http and sent on or refused with a 403 the
// agent can read, the upstream verified, bodies of megabytes streamed both
// ways. Every refusal has its allowed control beside it.
#include "egress_fixture.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>

using namespace cerberus;
using namespace cerberus::test;

TEST_CASE("egress proxy: an allowed GET reaches the server, a POST no rule allows gets a 403 the agent can act on")
{
    ProxyBench bench(bench_rules, bench_admitted);
    auto client = bench.client("api.example.org");
    REQUIRE(client->connected);

    auto allowed = client->send(request(http::verb::get, "/repos/acme/widgets?page=2"));
    CHECK(allowed.result_int() == 200);
    CHECK(allowed.body() == "hello GET /repos/acme/widgets?page=2");
    auto records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].kind == "http");
    CHECK(records[0].allowed);
    CHECK(records[0].method == "GET");
    CHECK(records[0].url == "https://api.example.org/repos/acme/widgets");
    CHECK(records[0].rule == "allowed_http[0] \"GET https://api.example.org/repos/acme/*\"");
    CHECK(records[0].status == 200);

    auto denied = client->send(request(http::verb::post, "/repos/acme/widgets"));
    CHECK(denied.result_int() == 403);
    CHECK(contains(denied.body(), "POST https://api.example.org/repos/acme/widgets is not in allowed_http"));
    CHECK(contains(denied.body(), "  GET https://api.example.org/repos/acme/*\n"));
    CHECK(contains(denied.body(), "  POST https://api.example.org/upload\n"));
    check_refused_post(bench.taken_records());

    // The same connection goes on (no body was left unread), and the allowed POST passes.
    auto control = client->send(request(http::verb::post, "/upload"));
    CHECK(control.result_int() == 200);
    CHECK(bench.upstream.connections == 1);
}

TEST_CASE("egress proxy: a handshake whose server name is not allowed, missing, or not admitted is refused")
{
    ProxyBench bench(bench_rules, bench_admitted);
    struct Case {
        std::string server_name;
        std::string reason;
    };
    for (const Case& refused : {Case{"evil.example.org", "the server name evil.example.org:443 is not in allowed_http"},
                                Case{"", "no server name (SNI) in the TLS ClientHello"},
                                Case{"fronted.example.org", "was not admitted by the DNS gate"}}) {
        CAPTURE(refused.server_name);
        auto client = bench.client(refused.server_name);
        CHECK_FALSE(client->connected);
        CHECK(contains(client->error(), "access denied"));
        client.reset();
        bench.finish_last_client();
        auto records = bench.taken_records();
        REQUIRE(records.size() == 1);
        CHECK(records[0].kind == "tls");
        CHECK_FALSE(records[0].allowed);
        CHECK(records[0].server_name == refused.server_name);
        CHECK(contains(records[0].reason, refused.reason));
    }
    // Control: the allowed and admitted name passes, with no record of its handshake.
    auto client = bench.client("api.example.org");
    CHECK(client->connected);
    CHECK(bench.taken_records().empty());
}

TEST_CASE("egress proxy: a client that trusts only its own CA fails closed, recorded")
{
    ProxyBench bench(bench_rules, bench_admitted);
    auto pinned = egress::CertificateAuthority::generate("the client's own CA");
    auto client = bench.client("api.example.org", pinned.certificate());
    CHECK_FALSE(client->connected);
    client.reset();
    bench.finish_last_client();
    auto records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].kind == "tls");
    CHECK(records[0].server_name == "api.example.org");
    CHECK(contains(records[0].reason, "the TLS handshake failed"));
}

TEST_CASE("egress proxy: a Host header naming another site than the TLS name is refused as fronting")
{
    ProxyBench bench(bench_rules, bench_admitted);
    auto client = bench.client("api.example.org");
    auto fronted = client->send(request(http::verb::get, "/repos/acme/x", "other.example.org"));
    CHECK(fronted.result_int() == 403);
    CHECK(contains(fronted.body(), "the Host header names other.example.org, the TLS server name was api.example.org"));
    auto records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK_FALSE(records[0].allowed);
    CHECK(contains(records[0].reason, "domain fronting"));

    auto other_port = client->send(request(http::verb::get, "/repos/acme/x", "api.example.org:8443"));
    CHECK(other_port.result_int() == 403);
    // Control: the same name, in another case and with the port dialled, passes.
    auto control = client->send(request(http::verb::get, "/repos/acme/x", "API.example.org:443"));
    CHECK(control.result_int() == 200);
    CHECK(bench.upstream.connections == 1);
}

TEST_CASE("egress proxy: paths with dot segments and protocol upgrades are refused")
{
    ProxyBench bench(bench_rules, bench_admitted);
    auto client = bench.client("api.example.org");
    CHECK(client->send(request(http::verb::get, "/repos/acme/../secret")).result_int() == 400);
    CHECK(client->send(request(http::verb::get, "/repos/acme/%2E%2e/secret")).result_int() == 400);
    auto upgrade = request(http::verb::get, "/repos/acme/socket");
    upgrade.set(http::field::connection, "Upgrade, HTTP2-Settings");
    upgrade.set(http::field::upgrade, "h2c");
    CHECK(client->send(upgrade).result_int() == 501);
    CHECK(bench.taken_records().size() == 3);
    CHECK(bench.upstream.connections == 0);
    // Control: the path the dots were dressed as, and a plain request, pass.
    CHECK(client->send(request(http::verb::get, "/repos/acme/..x/socket")).result_int() == 200);
}

TEST_CASE("egress proxy: a WebSocket upgrade a wss entry allows is tunnelled both ways until a side closes")
{
    ProxyBench bench({"GET https://api.example.org/repos/*", "GET wss://api.example.org/socket/*"}, bench_admitted);
    auto client = bench.client("api.example.org");
    // Where only the https entry reaches: refused, naming what is allowed.
    auto refused = client->send(websocket_upgrade("/repos/acme"));
    CHECK(refused.result_int() == 403);
    CHECK(contains(refused.body(), "GET wss://api.example.org/repos/acme is not in allowed_http"));
    CHECK(contains(refused.body(), "  GET wss://api.example.org/socket/*\n"));
    auto records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK_FALSE(records[0].allowed);
    CHECK(records[0].url == "wss://api.example.org/repos/acme");
    // The wss entry allows no plain request; the https entry does (control).
    CHECK(client->send(request(http::verb::get, "/socket/room1")).result_int() == 403);
    CHECK(client->send(request(http::verb::get, "/repos/acme")).result_int() == 200);
    bench.taken_records();

    auto switched = client->send(websocket_upgrade("/socket/room1"));
    CHECK(switched.result_int() == 101);
    records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].allowed);
    CHECK(records[0].status == 101);
    CHECK(records[0].url == "wss://api.example.org/socket/room1");
    CHECK(records[0].rule == "allowed_http[1] \"GET wss://api.example.org/socket/*\"");
    // Opaque both ways, in turn and in bulk.
    client->write_raw("one frame");
    CHECK(client->read_raw(9) == "one frame");
    std::string bulk = pattern_body(64 * 1024); // several TLS records each way
    for (int round = 0; round < 5; ++round) {
        client->write_raw(bulk);
        CHECK(client->read_raw(bulk.size()) == bulk);
    }
    // The agent gone, the proxy ends the tunnel and its thread.
    client.reset();
    bench.finish_last_client();
}

TEST_CASE("egress proxy: in audit mode a request the rules refuse reaches the server, recorded as audit; "
          "the TLS name and the request's form are checked as in enforce mode")
{
    ProxyBench bench({"GET https://api.example.org/repos/*", "GET wss://api.example.org/socket/*"}, bench_admitted,
                     true, true);
    auto client = bench.client("api.example.org");
    auto audited = client->send(request(http::verb::post, "/repos/acme/widgets"));
    CHECK(audited.result_int() == 200);
    CHECK(audited.body() == "hello POST /repos/acme/widgets");
    auto records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].audited);
    CHECK_FALSE(records[0].allowed);
    CHECK(records[0].rule == "not in allowed_http"); // the rule the refusal would have named
    CHECK(records[0].url == "https://api.example.org/repos/acme/widgets");
    CHECK(records[0].status == 200);
    // Control: an allowed request is recorded allowed, not audited.
    CHECK(client->send(request(http::verb::get, "/repos/acme/widgets")).result_int() == 200);
    records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].allowed);
    CHECK_FALSE(records[0].audited);
    // What is refused for its form stays refused: a Host naming another site, a dot segment.
    auto fronted = client->send(request(http::verb::get, "/repos/acme/x", "other.example.org"));
    CHECK(fronted.result_int() == 403);
    CHECK(client->send(request(http::verb::get, "/repos/../admin")).result_int() == 400);
    records = bench.taken_records();
    REQUIRE(records.size() == 2);
    CHECK_FALSE(records[0].audited);
    CHECK_FALSE(records[1].audited);
    // And a server name allowed_http does not list is refused at the handshake.
    auto other = bench.client("evil.example.org");
    CHECK_FALSE(other->connected);
    other.reset();
    bench.finish_last_client();
    bench.taken_records();

    // An upgrade no wss entry allows is switched too (the connection's last request).
    CHECK(client->send(websocket_upgrade("/repos/acme")).result_int() == 101);
    records = bench.taken_records();
    REQUIRE(records.size() == 1);
    CHECK(records[0].audited);
    CHECK(records[0].url == "wss://api.example.org/repos/acme");
    CHECK(records[0].status == 101);
    client.reset();
}

TEST_CASE("egress proxy: an upstream certificate not trusted, or not for the name, is a 502 saying why")
{
    SUBCASE("not signed by a trusted CA")
    {
        ProxyBench bench(bench_rules, bench_admitted, false);
        auto client = bench.client("api.example.org");
        auto response = client->send(request(http::verb::get, "/repos/acme/x"));
        CHECK(response.result_int() == 502);
        CHECK(contains(response.body(), "the upstream certificate failed verification: unable to get local issuer"));
        auto records = bench.taken_records();
        REQUIRE(records.size() == 1);
        CHECK(records[0].status == 502);
        CHECK(contains(records[0].reason, "failed verification"));
    }
    SUBCASE("trusted, but for another name than the agent asked for")
    {
        ProxyBench bench(bench_rules, bench_admitted);
        auto client = bench.client("other.example.org");
        auto response = client->send(request(http::verb::get, "/x", "other.example.org"));
        CHECK(response.result_int() == 502);
        CHECK(contains(response.body(), "hostname mismatch"));
    }
    // The control, a trusted certificate for the name, is every 200 above.
}

TEST_CASE("egress proxy: keep-alive, each request decided in turn on one connection both ways")
{
    ProxyBench bench(bench_rules, bench_admitted);
    auto client = bench.client("api.example.org");
    CHECK(client->send(request(http::verb::get, "/repos/acme/a")).result_int() == 200);
    CHECK(client->send(request(http::verb::delete_, "/repos/acme/a")).result_int() == 403);
    CHECK(client->send(request(http::verb::get, "/repos/acme/b")).body() == "hello GET /repos/acme/b");
    CHECK(client->interim.empty());
    // An interim response (102) is passed on, and the final one after it is the request's.
    CHECK(client->send(request(http::verb::get, "/repos/acme/slow")).body() ==
          "hello GET /repos/acme/slow");
    CHECK(client->interim == std::vector<int>{102});
    CHECK(client->send(request(http::verb::get, "/repos/acme/c")).body() == "hello GET /repos/acme/c");
    CHECK(bench.upstream.connections == 1);
    auto records = bench.taken_records();
    REQUIRE(records.size() == 5);
    CHECK(records[0].allowed);
    CHECK_FALSE(records[1].allowed);
    CHECK(records[2].allowed);

    SUBCASE("a refused request with a body closes the connection (its body is not read)")
    {
        auto refused = request(http::verb::post, "/repos/acme/a");
        refused.body() = "data the agent meant to send";
        auto response = client->send(refused);
        CHECK(response.result_int() == 403);
        CHECK_FALSE(response.keep_alive());
        CHECK(client->closed_by_proxy());
    }
}

TEST_CASE("egress proxy: a connection upstream the server closed while idle is not used again")
{
    ProxyBench bench(bench_rules, bench_admitted);
    auto client = bench.client("api.example.org");
    REQUIRE(client->connected);
    CHECK(client->send(request(http::verb::get, "/repos/acme/one")).result_int() == 200);
    CHECK(client->send(request(http::verb::get, "/repos/acme/then-close")).result_int() == 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // the server's close reaches the proxy
    auto after = client->send(request(http::verb::get, "/repos/acme/two"));
    CHECK(after.result_int() == 200);
    CHECK(after.body() == "hello GET /repos/acme/two");
    CHECK(bench.upstream.connections == 2); // the control: the first connection served two requests
}

TEST_CASE("egress proxy: twelve megabytes up and down, streamed through unchanged")
{
    ProxyBench bench(bench_rules, bench_admitted);
    auto client = bench.client("api.example.org");
    const size_t size = 12 << 20; // beyond Beast's default body limit of 8 MB
    auto upload = request(http::verb::post, "/upload");
    upload.body() = pattern_body(size);
    upload.set(http::field::expect, "100-continue");
    auto uploaded = client->send(upload);
    CHECK(uploaded.result_int() == 200);
    CHECK(uploaded.body() == "received " + std::to_string(size) + " bytes, the pattern");
    CHECK(client->interim == std::vector<int>{100}); // the proxy's, once it had decided on the header

    auto downloaded = client->send(request(http::verb::get, "/repos/acme/big?bytes=" + std::to_string(size)));
    CHECK(downloaded.result_int() == 200);
    CHECK(downloaded.body().size() == size);
    CHECK(downloaded.body() == pattern_body(size));
}
