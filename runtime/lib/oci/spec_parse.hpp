// SPDX-License-Identifier: Apache-2.0
// config.json → spec::Spec. Every type error names the JSON path of the
// offending field, e.g. `process.user.uid: expected an unsigned integer`.
#pragma once

#include "oci/spec.hpp"

#include <nlohmann/json_fwd.hpp>
#include <string>

namespace cerberus::spec {

Spec parse(const nlohmann::json& config);

// Reads and parses <bundle>/config.json; errors name the file.
Spec load_bundle(const std::string& bundle_dir);

// config.json's "hooks" object, and back to it: the container's state keeps
// its hooks in this form from create to delete.
Hooks parse_hooks(const nlohmann::json& hooks);
nlohmann::json hooks_json(const Hooks& hooks);

} // namespace cerberus::spec
