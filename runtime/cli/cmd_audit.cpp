// SPDX-License-Identifier: Apache-2.0
// audit-collector (hidden): the host-wide collector of policy denials that
// create starts; see audit_collector.hpp.
#include "audit/audit_collector.hpp"
#include "commands.hpp"
#include "options.hpp"

namespace cerberus::cli {

int cmd_audit_collector(const RuntimeOptions&, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 0, 0, "cerberus audit-collector");
    return audit::run_collector();
}

} // namespace cerberus::cli
