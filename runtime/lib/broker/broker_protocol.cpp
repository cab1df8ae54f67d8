// SPDX-License-Identifier: Apache-2.0
#include "broker/broker_protocol.hpp"

#include "base/error.hpp"

#include <nlohmann/json.hpp>

#include <cstring>

namespace cerberus::broker {
namespace {

constexpr bool magic_spells_name()
{
    for (int i = 0; i < 4; ++i)
        if (((CERBERUS_WIRE_MAGIC >> (8 * i)) & 0xff) != static_cast<unsigned char>(CERBERUS_WIRE_NAME[i]))
            return false;
    return sizeof(CERBERUS_WIRE_NAME) == 5;
}
static_assert(magic_spells_name(), "the wire's name is its magic's bytes, low byte first");
static_assert(sizeof(cerberus_wire_request) == 8 && sizeof(cerberus_wire_answer) == 16,
              "the wire's headers have no padding, so both ends lay them out alike");

[[noreturn]] void malformed(const std::string& what)
{
    throw Error("malformed call: " + what, EINVAL);
}

// The call is judged (rules, hooks, the record) as JSON text, and run as the bytes it holds: bytes that are not
// UTF-8 would be judged as something other than what runs. nlohmann's serializer is the check (type_error 316).
bool utf8_text(const std::string& text)
{
    try {
        (void)nlohmann::json(text).dump();
        return true;
    } catch (const nlohmann::json::type_error&) {
        return false;
    }
}

uint32_t wire_kind(Answer::Kind kind)
{
    switch (kind) {
    case Answer::Kind::exited: return CERBERUS_WIRE_EXITED;
    case Answer::Kind::signaled: return CERBERUS_WIRE_SIGNALED;
    case Answer::Kind::denied: return CERBERUS_WIRE_DENIED;
    case Answer::Kind::failed: break;
    }
    return CERBERUS_WIRE_FAILED;
}

} // namespace

Request parse_request(std::string_view message)
{
    if (message.size() > max_request_bytes)
        malformed("longer than " + std::to_string(max_request_bytes) + " bytes");
    cerberus_wire_request header;
    if (message.size() < sizeof header)
        malformed(std::to_string(message.size()) + " bytes, shorter than a request's header");
    std::memcpy(&header, message.data(), sizeof header);
    if (header.magic != CERBERUS_WIRE_MAGIC)
        malformed("not a request of this broker's wire (another version of the shim?)");
    if (header.arg_count > max_args)
        malformed(std::to_string(header.arg_count) + " arguments, more than " + std::to_string(max_args));
    std::string_view strings = message.substr(sizeof header);
    if (strings.empty() || strings.back() != '\0')
        malformed("its last string is not NUL-terminated");
    std::vector<std::string> fields;
    for (size_t start = 0; start < strings.size(); start = strings.find('\0', start) + 1)
        fields.emplace_back(strings.substr(start, strings.find('\0', start) - start));
    if (fields.size() != header.arg_count + 2)
        malformed(std::to_string(fields.size()) + " strings, not the tool, the working directory and " +
                  std::to_string(header.arg_count) + " arguments");
    if (fields[1].empty() || fields[1][0] != '/')
        malformed("the working directory is not an absolute path");
    for (const auto& field : fields)
        if (!utf8_text(field))
            malformed("its tool, working directory or an argument is not UTF-8 text");
    return Request{std::move(fields[0]), {std::make_move_iterator(fields.begin() + 2),
                                          std::make_move_iterator(fields.end())},
                   std::move(fields[1])};
}

std::string answer_message(const Answer& answer)
{
    cerberus_wire_answer header{CERBERUS_WIRE_MAGIC, wire_kind(answer.kind), answer.number,
                                static_cast<uint32_t>(answer.text.size())};
    std::string message(reinterpret_cast<const char*>(&header), sizeof header);
    return message + answer.text;
}

} // namespace cerberus::broker
