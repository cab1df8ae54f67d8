// SPDX-License-Identifier: Apache-2.0
// policy learn: the smallest widening of an audit-mode run's policy that
// allows everything its trail recorded, printed as a policy document.
// policy check: which recorded actions a policy would deny (exit 1 when any).
#include "audit/audit.hpp"
#include "audit/audit_format.hpp"
#include "audit/audit_trail.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "commands.hpp"
#include "container/state.hpp"
#include "options.hpp"
#include "policy/policy_records.hpp"
#include "usage_error.hpp"

#include <time.h>

#include <cstdio>

namespace cerberus::cli {
namespace {

constexpr const char* usage = "cerberus policy learn [--base POLICY] ID | --trail FILE\n"
                              "       cerberus policy check POLICY ID | --trail FILE";

// The trail named by --trail, or the container's under --audit-dir.
std::string trail_of(const RuntimeOptions& rt, const ParsedOptions& opts, size_t first_positional)
{
    size_t ids = opts.positional.size() - first_positional;
    if (opts.has("trail") == (ids == 1) || ids > 1)
        throw UsageError(std::string("usage: ") + usage);
    if (opts.has("trail"))
        return opts.get("trail");
    const std::string& id = opts.positional[first_positional];
    state::validate_id(id);
    return audit::trail_path(rt.audit_dir, id);
}

std::string now_rfc3339()
{
    struct timespec now {};
    clock_gettime(CLOCK_REALTIME, &now);
    return audit::rfc3339_ns(static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec);
}

int learn(const RuntimeOptions& rt, const ParsedOptions& opts)
{
    std::string trail = trail_of(rt, opts, 1);
    auto base = opts.has("base") ? std::optional<std::string>(opts.get("base")) : std::nullopt;
    auto learned = policy::learn_from_records(audit::read_records(trail), trail, base, now_rfc3339());
    std::printf("%s\n", learned.dump(2).c_str());
    return 0;
}

int check(const RuntimeOptions& rt, const ParsedOptions& opts)
{
    if (opts.positional.size() < 2)
        throw UsageError(std::string("usage: ") + usage);
    const std::string& file = opts.positional[1];
    std::string trail = trail_of(rt, opts, 2);
    auto policy = with_context("policy file " + file, [&] { return policy::parse_policy(files::read_file(file)); });
    auto findings = policy::check_records(policy, audit::read_records(trail));
    for (const auto& f : findings)
        std::printf("%s %s %s DENIED (%s)%s\n", f.first.c_str(), f.op.c_str(), f.target.c_str(), f.rule.c_str(),
                    f.times > 1 ? (" x" + std::to_string(f.times)).c_str() : "");
    std::printf("%zu kinds of recorded action would be denied by %s\n", findings.size(), file.c_str());
    return findings.empty() ? 0 : 1;
}

} // namespace

int cmd_policy(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"trail", 0, true}, {"base", 0, true}});
    if (opts.help)
        throw HelpRequested(std::string("usage: ") + usage);
    std::string verb = opts.positional.empty() ? "" : opts.positional[0];
    if (verb == "learn")
        return learn(rt, opts);
    if (verb == "check" && !opts.has("base"))
        return check(rt, opts);
    throw UsageError(std::string("usage: ") + usage);
}

} // namespace cerberus::cli
