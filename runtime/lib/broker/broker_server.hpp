// SPDX-License-Identifier: Apache-2.0
// The command broker (`cerberus command-broker`, started by broker.hpp's
// clients): one process per host and one event loop for every container it
// serves. For each registered container it listens on a socket in a
// directory bound into the container only (so the socket a call comes on says
// whose call it is), decides each call with the policy's commands, writes a
// `command` record to the container's trail and runs an allowed call's tool
// (broker_call.hpp), answering its exit status. A call in flight when the
// broker dies is killed with it, and its shim, left without an answer, fails.
// Exits 10 s after it serves no container.
#pragma once

namespace cerberus::broker {

// Runs until no container is registered; returns the process exit status
// (0 also when another broker already runs).
int run_broker();

} // namespace cerberus::broker
