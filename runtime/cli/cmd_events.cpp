// SPDX-License-Identifier: Apache-2.0
// events: `--stats` prints the container's stats once; otherwise stats every
// --interval (default 5s) and OOM notices, one JSON line each, until the
// container stops. `--denials` prints the container's audit trail of policy
// denials instead (`--format json|text`; `--follow` until it is deleted).
#include "audit/audit.hpp"
#include "audit/audit_trail.hpp"
#include "base/files.hpp"
#include "commands.hpp"
#include "container/events.hpp"
#include "container/state.hpp"
#include "options.hpp"
#include "usage_error.hpp"

#include <cstdio>
#include <regex>

namespace cerberus::cli {
namespace {

// A Go duration as runc takes it: "5s", "100ms", "1m30s".
std::chrono::milliseconds parse_interval(const std::string& text)
{
    static const std::regex part(R"((\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h))");
    double ms = 0;
    auto rest = text.cbegin();
    std::smatch m;
    while (rest != text.cend() && std::regex_search(rest, text.cend(), m, part, std::regex_constants::match_continuous)) {
        static const std::pair<const char*, double> units[] = {{"ns", 1e-6}, {"us", 1e-3}, {"µs", 1e-3}, {"ms", 1},
                                                               {"s", 1e3},   {"m", 6e4},   {"h", 3.6e6}};
        for (const auto& [unit, scale] : units)
            if (m[2] == unit)
                ms += std::stod(m[1]) * scale;
        rest = m[0].second;
    }
    if (text.empty() || rest != text.cend() || ms < 1)
        throw UsageError("--interval: invalid duration \"" + text + "\"");
    return std::chrono::milliseconds(static_cast<long long>(ms));
}

void print_line(const std::string& line)
{
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

int print_denials(const RuntimeOptions& rt, const std::string& id, const ParsedOptions& opts)
{
    std::string format = opts.get("format", "text");
    if (format != "text" && format != "json")
        throw UsageError("--format: expected json or text, got \"" + format + "\"");
    auto trail_format = format == "json" ? audit::TrailFormat::json : audit::TrailFormat::text;
    state::validate_id(id);
    std::string path = audit::trail_path(rt.audit_dir, id);
    std::string state_file = rt.root + "/" + id + "/state.json";
    // Following a container that does not exist (any more) is printing its
    // trail once: it fails the same way when there is none.
    if (!opts.flag("follow") || !files::exists(state_file)) {
        audit::print_trail(path, trail_format, print_line);
        return 0;
    }
    audit::follow_trail(path, trail_format, print_line, [&] { return files::exists(state_file); });
    return 0;
}

} // namespace

int cmd_events(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"stats", 0, false}, {"interval", 0, true}, {"denials", 0, false},
                                              {"follow", 'f', false}, {"format", 0, true}});
    expect_positional(opts, 1, 1,
                      "cerberus events [--stats] [--interval DURATION] ID\n"
                      "       cerberus events --denials [--follow] [--format json|text] ID");
    const std::string& id = opts.positional[0];
    if (opts.flag("denials"))
        return print_denials(rt, id, opts);
    if (opts.flag("stats")) {
        print_line(events::format("stats", id, events::stats_data(events::read_stats(rt, id))));
        return 0;
    }
    events::stream(rt, id, parse_interval(opts.get("interval", "5s")), print_line);
    return 0;
}

} // namespace cerberus::cli
