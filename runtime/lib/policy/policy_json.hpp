// SPDX-License-Identifier: Apache-2.0
// Reading a policy document's JSON: every error names the field (and entry)
// it is about, e.g. `policy.allowed_paths[1]: expected a string, got number 3`
// (errno EINVAL). Shared by parse_policy and the rule lists' own parsers.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cerberus::policy {

[[noreturn]] void invalid(const std::string& field, const std::string& what);

// value as JSON text ("\"a\""), for messages.
std::string json_quoted(const std::string& value);

// value, when it is of that type; type_name says it in messages ("an array").
const nlohmann::json& expect(const nlohmann::json& value, nlohmann::json::value_t type, const char* type_name,
                             const std::string& field);

// An array of strings; entries are named field[i].
std::vector<std::string> string_list(const nlohmann::json& value, const std::string& field);

// An array of paths, each in normal form (normalize_policy_path).
std::vector<std::string> path_list(const nlohmann::json& value, const std::string& field);

// field[i], the name of a list's entry in messages.
std::string entry_field(const std::string& field, size_t index);

} // namespace cerberus::policy
