// SPDX-License-Identifier: Apache-2.0
// state, list, spec: what the runtime knows, printed as runc prints it.
#include "audit/asks.hpp"
#include "audit/audit.hpp"
#include "audit/audit_format.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "broker/broker.hpp"
#include "cgroup/cgroup_mounts.hpp"
#include "commands.hpp"
#include "container/container.hpp"
#include "dns/dns_gate.hpp"
#include "oci/spec_default.hpp"
#include "options.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

using nlohmann::ordered_json;

namespace cerberus::cli {
namespace {

// In runc's order of fields (ordered_json): `list --format json` is matched as text by runc's own tests.
ordered_json state_json(const container::Snapshot& s)
{
    bool stopped = s.status == state::Status::stopped;
    ordered_json j = {
        {"ociVersion", s.state.oci_version},
        {"id", s.state.id},
        {"pid", stopped ? 0 : s.state.pid},
        {"status", state::to_string(s.status)},
        {"bundle", s.state.bundle},
        {"rootfs", s.state.rootfs},
        {"created", s.state.created},
    };
    if (!s.state.annotations.empty())
        j["annotations"] = s.state.annotations;
    j["owner"] = "";
    if (s.state.has_policy)
        j["cerberus.enforcement"] = s.state.enforcement; // the backend the policy runs under
    if (auto lost = s.state.has_policy ? audit::events_lost(s.state.cgroup_id) : std::nullopt)
        j["cerberus.eventsLost"] = *lost; // policy denials the ring buffer could not take
    if (auto names = s.state.has_policy ? dns::admitted(s.state.cgroup_id) : std::nullopt)
        j["cerberus"]["dns"] = *names; // what the DNS gate admitted, per name, until when
    if (s.state.has_policy)
        if (auto grants = audit::grants_shown(); grants.count(s.state.cgroup_id))
            j["cerberus"]["grants"] = grants.at(s.state.cgroup_id); // what operators granted it, until when
    return j;
}

bool cgroup2_only_host()
{
    try {
        return cgroups::detect_layout() == cgroups::Layout::unified;
    } catch (const Error&) {
        return false; // no cgroup2 mounted at all
    }
}

} // namespace

int cmd_state(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 1, 1, "cerberus state ID");
    dns::restart_if_needed();
    broker::restart_if_needed();
    std::printf("%s\n", state_json(container::inspect(rt, opts.positional[0])).dump(2).c_str());
    return 0;
}

int cmd_list(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"format", 'f', true}, {"quiet", 'q', false}});
    expect_positional(opts, 0, 0, "cerberus list [--format table|json] [--quiet]");
    dns::restart_if_needed();
    broker::restart_if_needed();
    auto containers = container::list(rt);
    std::string format = opts.get("format", "table");
    if (opts.flag("quiet")) {
        for (const auto& c : containers)
            std::printf("%s\n", c.state.id.c_str());
    } else if (format == "json") {
        ordered_json out = ordered_json::array();
        for (const auto& c : containers)
            out.push_back(state_json(c));
        std::printf("%s\n", out.dump().c_str());
    } else if (format == "table") {
        std::printf("%-20s %-8s %-10s %-40s %-31s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
        for (const auto& c : containers) {
            pid_t pid = c.status == state::Status::stopped ? 0 : c.state.pid;
            std::printf("%-20s %-8d %-10s %-40s %-31s %s\n", c.state.id.c_str(), pid, state::to_string(c.status),
                        c.state.bundle.c_str(), c.state.created.c_str(), "root");
        }
    } else {
        throw Error("--format: expected table or json, got \"" + format + "\"", EINVAL);
    }
    return 0;
}

int cmd_spec(const RuntimeOptions&, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"bundle", 'b', true}, {"rootless", 0, false}});
    expect_positional(opts, 0, 0, "cerberus spec [--bundle DIR] [--rootless]");
    std::string path = opts.get("bundle", ".") + "/config.json";
    if (files::exists(path))
        throw Error("File " + path + " exists. Remove it first", EEXIST);
    spec::DefaultOptions defaults{.rootless = opts.flag("rootless"), .cgroup_namespace = cgroup2_only_host()};
    files::write_file_atomic(path, spec::default_config(defaults).dump(4) + "\n", 0644);
    return 0;
}

} // namespace cerberus::cli
