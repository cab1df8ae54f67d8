// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_json.hpp"

#include "base/error.hpp"
#include "policy/policy.hpp"

namespace cerberus::policy {

using nlohmann::json;

void invalid(const std::string& field, const std::string& what)
{
    throw Error(field + ": " + what, EINVAL);
}

std::string json_quoted(const std::string& value)
{
    return json(value).dump();
}

const json& expect(const json& value, json::value_t type, const char* type_name, const std::string& field)
{
    if (value.type() != type)
        invalid(field, std::string("expected ") + type_name + ", got " + value.type_name() + " " + value.dump());
    return value;
}

std::string entry_field(const std::string& field, size_t index)
{
    return field + "[" + std::to_string(index) + "]";
}

std::vector<std::string> string_list(const json& value, const std::string& field)
{
    std::vector<std::string> items;
    for (size_t i = 0; i < expect(value, json::value_t::array, "an array", field).size(); ++i)
        items.push_back(expect(value[i], json::value_t::string, "a string", entry_field(field, i)).get<std::string>());
    return items;
}

std::vector<std::string> path_list(const json& value, const std::string& field)
{
    std::vector<std::string> paths;
    auto items = string_list(value, field);
    for (size_t i = 0; i < items.size(); ++i)
        paths.push_back(normalize_policy_path(items[i], entry_field(field, i)));
    return paths;
}

} // namespace cerberus::policy
