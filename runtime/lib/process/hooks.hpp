// SPDX-License-Identifier: Apache-2.0
// OCI hooks: each runs with the container state JSON on stdin, its own args
// and env, and an optional timeout after which it is killed.
#pragma once

#include "oci/spec.hpp"

#include <string>
#include <vector>

namespace cerberus::hooks {

// Runs the hooks in order; the first failure throws, naming the kind and path.
void run_all(const std::vector<spec::Hook>& hooks, const std::string& kind, const std::string& state_json);

// For poststart and poststop, whose failures the runtime-spec makes warnings:
// every hook runs, and each failure is logged.
void run_all_warning_on_failure(const std::vector<spec::Hook>& hooks, const std::string& kind,
                                const std::string& state_json);

} // namespace cerberus::hooks
