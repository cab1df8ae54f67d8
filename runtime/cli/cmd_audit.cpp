// SPDX-License-Identifier: Apache-2.0
// audit-collector, dns-gate and command-broker (hidden): the host-wide daemons
// create starts; see audit_collector.hpp, dns_gate_server.hpp and broker_server.hpp.
#include "audit/audit_collector.hpp"
#include "broker/broker_server.hpp"
#include "commands.hpp"
#include "dns/dns_gate_server.hpp"
#include "options.hpp"
#include "policy/observed_calls.hpp"

namespace cerberus::cli {

int cmd_audit_collector(const RuntimeOptions&, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"no-call-observer", 0, false}});
    expect_positional(opts, 0, 0, "cerberus audit-collector");
    policy::CallJudge judge;
    return audit::run_collector(std::ref(judge), !opts.flag("no-call-observer"));
}

// dns-gate (hidden): the host-wide DNS gate create starts for policies that
// name hosts; see dns_gate_server.hpp.
int cmd_dns_gate(const RuntimeOptions&, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 0, 0, "cerberus dns-gate");
    return dns::run_gate();
}

// command-broker (hidden): the host-wide broker create starts for policies
// with commands; see broker_server.hpp.
int cmd_command_broker(const RuntimeOptions&, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 0, 0, "cerberus command-broker");
    return broker::run_broker();
}

} // namespace cerberus::cli
