// SPDX-License-Identifier: Apache-2.0
// One function per subcommand: parse its options, make one library call.
#pragma once

#include "base/runtime_options.hpp"

#include <string>
#include <vector>

namespace cerberus::cli {

using Args = std::vector<std::string>;

int cmd_create(const RuntimeOptions& rt, const Args& args);
int cmd_start(const RuntimeOptions& rt, const Args& args);
int cmd_run(const RuntimeOptions& rt, const Args& args);
int cmd_state(const RuntimeOptions& rt, const Args& args);
int cmd_kill(const RuntimeOptions& rt, const Args& args);
int cmd_delete(const RuntimeOptions& rt, const Args& args);
int cmd_list(const RuntimeOptions& rt, const Args& args);
int cmd_spec(const RuntimeOptions& rt, const Args& args);
int cmd_features(const RuntimeOptions& rt, const Args& args);
int cmd_exec(const RuntimeOptions& rt, const Args& args);
int cmd_ps(const RuntimeOptions& rt, const Args& args);
int cmd_pause(const RuntimeOptions& rt, const Args& args);
int cmd_resume(const RuntimeOptions& rt, const Args& args);
int cmd_update(const RuntimeOptions& rt, const Args& args);
int cmd_events(const RuntimeOptions& rt, const Args& args);
int cmd_audit_collector(const RuntimeOptions& rt, const Args& args);
int cmd_dns_gate(const RuntimeOptions& rt, const Args& args);
int cmd_command_broker(const RuntimeOptions& rt, const Args& args);
int cmd_check(const RuntimeOptions& rt, const Args& args);
int cmd_policy(const RuntimeOptions& rt, const Args& args);
int cmd_dashboard(const RuntimeOptions& rt, const Args& args);
int cmd_ask(const RuntimeOptions& rt, const Args& args);

} // namespace cerberus::cli
