// SPDX-License-Identifier: Apache-2.0
#include "dashboard/dashboard_server.hpp"

#include "audit/audit_format.hpp"
#include "audit/dashboard_hub.hpp"
#include "base/error.hpp"
#include "base/numbers.hpp"
#include "audit/asks.hpp"
#include "container/ask_client.hpp"
#include "container/state.hpp"
#include "dashboard/dashboard_assets.hpp"
#include "dns/dns_gate.hpp"
#include "policy/rule_lists.hpp"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/random.h>

#include <httplib.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

namespace cerberus::dashboard {
namespace {

using audit::DashboardHub;
using httplib::Request;
using httplib::Response;

constexpr const char* cookie_name = "cerberus_dashboard";
constexpr size_t min_token_length = 16;
constexpr size_t trail_limit = 5000; // records of one trail sent at most
constexpr size_t feed_limit = 500;   // records the page starts with
constexpr auto keep_alive_every = std::chrono::seconds(10);

bool is_loopback(const std::string& host)
{
    in_addr v4{};
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
        return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

// The host part of a Host header: "127.0.0.1:7070", "[::1]:7070", "localhost".
std::string host_of(const std::string& header)
{
    if (!header.empty() && header[0] == '[')
        return header.substr(1, header.find(']') - 1);
    return header.substr(0, header.find(':'));
}

std::string cookie_value(const Request& req)
{
    std::string cookies = req.get_header_value("Cookie");
    std::string prefix = std::string(cookie_name) + "=";
    for (size_t start = 0; start < cookies.size();) {
        size_t end = cookies.find(';', start);
        if (end == std::string::npos)
            end = cookies.size();
        std::string item = cookies.substr(start, end - start);
        item.erase(0, item.find_first_not_of(' '));
        if (item.rfind(prefix, 0) == 0)
            return item.substr(prefix.size());
        start = end + 1;
    }
    return "";
}

bool authorized(const Request& req, const std::string& token)
{
    std::string header = req.get_header_value("Authorization");
    if (header.rfind("Bearer ", 0) == 0)
        return tokens_equal(header.substr(7), token);
    std::string cookie = cookie_value(req);
    return !cookie.empty() && tokens_equal(cookie, token);
}

// What a request must bring: the dashboard's token (none: loopback only), and
// for an answer the page's answer key, made at start and never a cookie.
struct Keys {
    std::string token;
    std::string answer;
};

std::string random_key()
{
    unsigned char bytes[16];
    if (getrandom(bytes, sizeof bytes, 0) != sizeof bytes)
        throw_errno("getrandom");
    std::string key;
    for (unsigned char byte : bytes) {
        char hex[3];
        std::snprintf(hex, sizeof hex, "%02x", byte);
        key += hex;
    }
    return key;
}

httplib::Server::HandlerResponse refuse(Response& res, int status, const std::string& why)
{
    res.status = status;
    res.set_content(why + "\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
}

// An answer (POST /api/asks/ID/answer) changes what a container may do, so
// beyond what a GET needs it must come from the page itself: JSON (a form
// cannot send it), the answer key in X-Cerberus-Answer (a header another
// origin cannot set without a preflight, which this server never allows; the
// page reads the key from /api/session, which another origin cannot read) or
// the token as a Bearer header, and, when the browser says where it comes from
// (Origin, Sec-Fetch-Site), from this origin. A cookie alone never answers.
httplib::Server::HandlerResponse answer_gate(const Request& req, Response& res, const Keys& keys)
{
    if (!req.path.starts_with("/api/asks/"))
        return refuse(res, 405, "only an answer to an ask is posted");
    if (!req.get_header_value("Content-Type").starts_with("application/json"))
        return refuse(res, 415, "an answer is JSON: {\"answer\": \"once\"}");
    std::string origin = req.get_header_value("Origin");
    if (!origin.empty() && origin != "http://" + req.get_header_value("Host"))
        return refuse(res, 403, "an answer from another origin (" + origin + ") is refused");
    std::string site = req.get_header_value("Sec-Fetch-Site");
    if (!site.empty() && site != "same-origin")
        return refuse(res, 403, "an answer from another site (" + site + ") is refused");
    std::string bearer = req.get_header_value("Authorization");
    bool keyed = tokens_equal(req.get_header_value("X-Cerberus-Answer"), keys.answer) ||
                 (!keys.token.empty() && bearer.starts_with("Bearer ") && tokens_equal(bearer.substr(7), keys.token));
    if (!keyed)
        return refuse(res, 403, "an answer needs the page's key in X-Cerberus-Answer (GET /api/session) or the "
                                "token in Authorization: Bearer; a cookie alone does not answer");
    return httplib::Server::HandlerResponse::Unhandled;
}

// Every request: GET, or POST of an answer; the token when there is one, else
// a loopback Host header (a page elsewhere that rebinds its name to 127.0.0.1
// gets nothing).
httplib::Server::HandlerResponse gate(const Request& req, Response& res, const Keys& keys)
{
    using httplib::Server;
    if (req.method != "GET" && req.method != "POST")
        return refuse(res, 405, "GET, and POST of an answer to an ask, only");
    auto admitted = [&] { return req.method == "POST" ? answer_gate(req, res, keys) : Server::HandlerResponse::Unhandled; };
    if (keys.token.empty()) {
        std::string host = host_of(req.get_header_value("Host"));
        if (host == "localhost" || is_loopback(host))
            return admitted();
        return refuse(res, 403, "this dashboard answers only to its loopback address");
    }
    if (authorized(req, keys.token))
        return admitted();
    // Opening /?token=T once keeps the token in a cookie the page's requests carry.
    if (req.method == "GET" && req.path == "/" && req.has_param("token") &&
        tokens_equal(req.get_param_value("token"), keys.token)) {
        res.status = 303;
        res.set_header("Location", "/");
        res.set_header("Set-Cookie", std::string(cookie_name) + "=" + keys.token + "; HttpOnly; SameSite=Strict; Path=/");
        return Server::HandlerResponse::Handled;
    }
    res.set_header("WWW-Authenticate", "Bearer realm=\"cerberus dashboard\"");
    return refuse(res, 401, "a token is needed: Authorization: Bearer TOKEN, or open /?token=TOKEN once");
}

std::string status_of(const std::string& root, const std::string& id)
{
    if (root.empty())
        return "unknown";
    try {
        auto dir = state::Store(root).open(id, state::Store::Access::read);
        return state::to_string(state::current_status(dir.load(), dir));
    } catch (const std::exception&) {
        return "gone"; // deleted, its registry entry not yet dropped
    }
}

uint64_t number_or(const std::string& text, uint64_t fallback)
{
    return parse_whole<uint64_t>(text).value_or(fallback);
}

void serve_asset(Response& res, std::string_view name)
{
    auto asset = dashboard_asset(name);
    res.set_content(std::string(asset->content), asset->content_type);
}

// POST /api/asks/ID/answer {"answer": "once" | "for 10m" | "always" | "deny"}: sent to what holds the ask,
// as `cerberus ask allow|deny` sends it; 400 for a malformed answer, 409 with the holder's words when it
// refused (answered already, no such ask), 503 when none runs.
void add_answer_routes(httplib::Server& server, const std::string& answer_key)
{
    server.Get("/api/session", [answer_key](const Request&, Response& res) {
        res.set_content(nlohmann::json{{"answer_key", answer_key}}.dump(), "application/json");
    });
    server.Post(R"(/api/asks/([0-9a-f]{8})/answer)", [](const Request& req, Response& res) {
        nlohmann::json reply;
        std::optional<audit::AskAnswer> answer;
        try {
            answer = audit::parse_ask_answer(nlohmann::json::parse(req.body).at("answer").get<std::string>());
        } catch (const std::exception& e) {
            res.status = 400;
            reply["error"] = std::string("the answer: ") + e.what();
        }
        try {
            if (answer)
                reply["done"] = container::answer_pending_ask(req.matches[1].str(), *answer);
        } catch (const Error& e) {
            res.status = e.errnum() == ESRCH ? 503 : 409;
            reply["error"] = e.what();
        }
        res.set_content(reply.dump(), "application/json");
    });
}

void add_routes(httplib::Server& server, DashboardHub& hub)
{
    server.Get("/", [](const Request&, Response& res) { serve_asset(res, "index.html"); });
    server.Get("/app.js", [](const Request&, Response& res) { serve_asset(res, "app.js"); });
    server.Get("/app.css", [](const Request&, Response& res) { serve_asset(res, "app.css"); });
    // Each rule list's name and short label, in the order policies are written: the page sums a start
    // record's policy up with them.
    server.Get("/api/rule-lists", [](const Request&, Response& res) {
        nlohmann::json lists = nlohmann::json::array();
        for (const auto& list : policy::rule_lists())
            lists.push_back({{"name", list.name}, {"label", list.label}});
        res.set_content(lists.dump(), "application/json");
    });
    server.Get("/api/containers", [&hub](const Request&, Response& res) {
        nlohmann::json list = hub.containers();
        auto asks = audit::read_pending_asks();
        auto grants = audit::grants_shown(); // read once for every container
        for (auto& container : list) {
            if (container.contains("cgroup_id")) {
                uint64_t cgroup_id = container["cgroup_id"].get<uint64_t>();
                if (auto names = dns::admitted(cgroup_id))
                    container["dns"] = *names; // [{name, address, ports, expires}]: what the DNS gate admitted
                // [{id, tool, args | host, expires, ...}]
                container["grants"] = grants.count(cgroup_id) ? grants.at(cgroup_id) : nlohmann::json::array();
            }
            // [{id, tool, args, cwd, pid | host, rule, deadline}]: calls and lookups held
            container["asks"] = nlohmann::json::array();
            for (const auto& ask : asks)
                if (ask.container == container.value("id", "")) {
                    auto shown = audit::to_json(ask);
                    shown["deadline"] = audit::rfc3339_ns(ask.deadline_ns);
                    container["asks"].push_back(std::move(shown));
                }
        }
        res.set_content(list.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
    });
    server.Get("/api/trail", [&hub](const Request& req, Response& res) {
        auto trail = hub.trail(req.get_param_value("id"), std::min<uint64_t>(
                                                               number_or(req.get_param_value("limit"), trail_limit),
                                                               trail_limit));
        if (!trail) {
            res.status = 404;
            res.set_content("{\"error\":\"no such container\"}", "application/json");
            return;
        }
        res.set_content(trail->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
    });
    // The latest records, and the sequence number to follow /api/events from.
    server.Get("/api/feed", [&hub](const Request&, Response& res) {
        uint64_t seq = hub.last_seq();
        std::string body = "{\"seq\":" + std::to_string(seq) + ",\"records\":[";
        bool first = true;
        for (const auto& record : hub.recent(feed_limit)) {
            if (record.seq > seq)
                break;
            body += (first ? "" : ",") + record.line; // each a JSON object (the hub keeps no other line)
            first = false;
        }
        res.set_content(body + "]}", "application/json");
    });
    // Server-Sent Events: each record as it is written, from `after` (or the
    // Last-Event-ID a reconnecting browser sends) on.
    server.Get("/api/events", [&hub](const Request& req, Response& res) {
        uint64_t after = number_or(req.has_header("Last-Event-ID") ? req.get_header_value("Last-Event-ID")
                                                                   : req.get_param_value("after"),
                                   hub.last_seq());
        res.set_chunked_content_provider("text/event-stream", [&hub, after](size_t, httplib::DataSink& sink) mutable {
            auto records = hub.wait_records(after, keep_alive_every);
            if (hub.stopped()) {
                sink.done();
                return true;
            }
            std::string out = records.empty() ? ": keep-alive\n\n" : "";
            // Records that left the kept window before this client got them: say how many, so
            // that the page can tell the operator its feed has a hole (the trails have them all).
            if (!records.empty() && records.front().seq > after + 1)
                out += "event: skipped\ndata: {\"skipped\":" + std::to_string(records.front().seq - after - 1) + "}\n\n";
            for (const auto& record : records) {
                out += "id: " + std::to_string(record.seq) + "\ndata: " + record.line + "\n\n";
                after = record.seq;
            }
            return sink.write(out.data(), out.size());
        });
    });
}

httplib::Headers security_headers()
{
    return {
        {"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
                                    "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
        {"X-Content-Type-Options", "nosniff"},
        {"X-Frame-Options", "DENY"},
        {"Referrer-Policy", "no-referrer"},
        {"Cache-Control", "no-store"},
    };
}

} // namespace

ListenAddress parse_listen(const std::string& text)
{
    auto bad = [&](const std::string& why) {
        return Error("--listen: " + why + " \"" + text + "\" (expected ADDRESS:PORT or [IPV6]:PORT)", EINVAL);
    };
    size_t colon = text.rfind(':');
    if (colon == std::string::npos)
        throw bad("no port in");
    ListenAddress address;
    address.host = text.substr(0, colon);
    if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']')
        address.host = address.host.substr(1, address.host.size() - 2);
    in6_addr any{};
    if (inet_pton(AF_INET, address.host.c_str(), &any) != 1 && inet_pton(AF_INET6, address.host.c_str(), &any) != 1)
        throw bad("not a numeric address in");
    auto port = parse_number(std::string_view(text).substr(colon + 1), 65535);
    if (!port || *port < 1)
        throw bad("bad port in");
    address.port = static_cast<int>(*port);
    address.loopback = is_loopback(address.host);
    return address;
}

bool tokens_equal(std::string_view given, std::string_view expected)
{
    // Every byte of the expected token is looked at whatever the given one holds.
    unsigned char differ = given.size() != expected.size();
    for (size_t i = 0; i < expected.size(); ++i)
        differ |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
    return differ == 0 && !expected.empty();
}

int serve_dashboard(const DashboardOptions& options)
{
    ListenAddress address = parse_listen(options.listen);
    if (!address.loopback && options.token.empty())
        throw Error("--listen " + options.listen + " is not a loopback address: give --token", EINVAL);
    if (!options.token.empty() && options.token.size() < min_token_length)
        throw Error("--token: at least " + std::to_string(min_token_length) + " characters", EINVAL);

    // SIGINT and SIGTERM go to one thread that stops the server; the others never see them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    DashboardHub hub(options.audit_dir, status_of);
    hub.start();
    httplib::Server server;
    server.new_task_queue = [] { return new httplib::ThreadPool(16); };
    server.set_default_headers(security_headers());
    Keys keys{options.token, random_key()};
    server.set_pre_routing_handler([keys](const Request& req, Response& res) { return gate(req, res, keys); });
    add_routes(server, hub);
    add_answer_routes(server, keys.answer);
    if (!server.bind_to_port(address.host, address.port))
        throw_errno("--listen " + options.listen + ": cannot listen there");

    std::string shown = address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host;
    std::printf("cerberus dashboard: http://%s:%d/ (trails in %s)\n", shown.c_str(), address.port,
                options.audit_dir.c_str());
    if (!address.loopback)
        std::printf("cerberus dashboard: %s is not a loopback address: every request needs the token given with "
                    "--token (Authorization: Bearer TOKEN, or open http://%s:%d/?token=TOKEN once)\n",
                    shown.c_str(), shown.c_str(), address.port);
    else if (!options.token.empty())
        std::printf("cerberus dashboard: every request needs the token (open http://%s:%d/?token=TOKEN once)\n",
                    shown.c_str(), address.port);
    std::fflush(stdout);

    std::atomic<bool> listen_ended = false;
    std::thread stopper([&] {
        int signal_number = 0;
        sigwait(&stop_signals, &signal_number);
        hub.stop();
        // A signal that comes before the server runs would find nothing to stop.
        while (!server.is_running() && !listen_ended)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        server.stop();
    });
    server.listen_after_bind();
    listen_ended = true;
    hub.stop();
    pthread_kill(stopper.native_handle(), SIGTERM); // listen ended on its own: let the stopper go
    stopper.join();
    return 0;
}

} // namespace cerberus::dashboard
