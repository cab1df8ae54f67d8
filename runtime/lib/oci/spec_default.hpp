// SPDX-License-Identifier: Apache-2.0
// The config.json that `cerberus spec` writes: the same starting point runc gives.
#pragma once

#include <nlohmann/json.hpp>

namespace cerberus::spec {

// rootless: a user namespace mapping the calling user to root.
nlohmann::json default_config(bool rootless);

} // namespace cerberus::spec
