// SPDX-License-Identifier: Apache-2.0
#include "broker/broker_protocol.hpp"

#include "base/error.hpp"

#include <nlohmann/json.hpp>

namespace cerberus::broker {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(const std::string& what)
{
    throw Error("malformed call: " + what, EINVAL);
}

std::string text_field(const json& request, const char* name)
{
    auto it = request.find(name);
    if (it == request.end() || !it->is_string())
        malformed(std::string("\"") + name + "\" is not a string");
    std::string value = it->get<std::string>();
    if (value.find('\0') != std::string::npos)
        malformed(std::string("\"") + name + "\" holds a NUL byte");
    return value;
}

} // namespace

std::string request_json(const Request& request)
{
    return json{{"tool", request.tool}, {"args", request.args}, {"cwd", request.cwd}}.dump(
        -1, ' ', false, json::error_handler_t::replace);
}

Request parse_request(std::string_view text)
{
    if (text.size() > max_request_bytes)
        malformed("longer than " + std::to_string(max_request_bytes) + " bytes");
    json request = json::parse(text, nullptr, false);
    if (!request.is_object())
        malformed("not a JSON object");
    Request out;
    out.tool = text_field(request, "tool");
    out.cwd = text_field(request, "cwd");
    if (out.cwd.empty() || out.cwd[0] != '/')
        malformed("\"cwd\" is not an absolute path");
    auto args = request.find("args");
    if (args == request.end() || !args->is_array())
        malformed("\"args\" is not an array");
    if (args->size() > max_args)
        malformed(std::to_string(args->size()) + " arguments, more than " + std::to_string(max_args));
    for (const auto& arg : *args) {
        if (!arg.is_string() || arg.get<std::string>().find('\0') != std::string::npos)
            malformed("an argument is not a string without NUL bytes");
        out.args.push_back(arg.get<std::string>());
    }
    return out;
}

std::string answer_json(const Answer& answer)
{
    switch (answer.kind) {
    case Answer::Kind::exited: return json{{"status", answer.number}}.dump();
    case Answer::Kind::signaled: return json{{"signal", answer.number}}.dump();
    case Answer::Kind::denied: return json{{"denied", answer.text}}.dump(-1, ' ', false, json::error_handler_t::replace);
    case Answer::Kind::failed: break;
    }
    return json{{"error", answer.text}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<Answer> parse_answer(std::string_view text)
{
    json answer = json::parse(text, nullptr, false);
    if (!answer.is_object() || answer.size() != 1)
        return std::nullopt;
    const std::string key = answer.begin().key();
    const json& value = answer.begin().value();
    if ((key == "status" || key == "signal") && value.is_number_integer())
        return Answer{key == "status" ? Answer::Kind::exited : Answer::Kind::signaled, value.get<int>(), {}};
    if ((key == "denied" || key == "error") && value.is_string())
        return Answer{key == "denied" ? Answer::Kind::denied : Answer::Kind::failed, 0, value.get<std::string>()};
    return std::nullopt;
}

} // namespace cerberus::broker
