// SPDX-License-Identifier: Apache-2.0
// The config.json that `cerberus spec` writes: the same starting point runc gives.
#pragma once

#include <nlohmann/json.hpp>

namespace cerberus::spec {

struct DefaultOptions {
    bool rootless = false; // a user namespace mapping the calling user to root
    // A cgroup namespace of its own, as crun's spec gives on a cgroup2-only
    // host; runc's never does, and on a v1 host its suite expects none.
    bool cgroup_namespace = false;
};

nlohmann::json default_config(const DefaultOptions& options);

} // namespace cerberus::spec
