// SPDX-License-Identifier: Apache-2.0
// dashboard: the live web view of every policed container (dashboard/dashboard_server.hpp).
#include "commands.hpp"
#include "options.hpp"
#include "dashboard/dashboard_server.hpp"

namespace cerberus::cli {

int cmd_dashboard(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"listen", 0, true}, {"audit-dir", 0, true}, {"token", 0, true}});
    expect_positional(opts, 0, 0, "cerberus dashboard [--listen ADDRESS:PORT] [--audit-dir DIR] [--token TOKEN]");
    dashboard::DashboardOptions options;
    options.listen = opts.get("listen", options.listen);
    options.audit_dir = opts.get("audit-dir", rt.audit_dir);
    options.token = opts.get("token");
    return dashboard::serve_dashboard(options);
}

} // namespace cerberus::cli
