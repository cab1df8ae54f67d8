// SPDX-License-Identifier: Apache-2.0
#include "egress/egress_config.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "base/text.hpp"
#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace cerberus::egress {
namespace {

using nlohmann::json;

constexpr const char* secret_mark = "{secret}";
// Shorter secrets would have the scrub mask ordinary text of the responses.
constexpr size_t min_secret_length = 8;

[[noreturn]] void invalid(const std::string& field, const std::string& why)
{
    throw Error(std::string(host_config_path) + ": " + field + ": " + why, EINVAL);
}

// entry's key (entry is at field: "" for the top), a one-line string; "" when absent and not required.
std::string text_field(const json& entry, const std::string& key, const std::string& field, bool required)
{
    std::string path = field.empty() ? key : field + "." + key;
    auto it = entry.find(key);
    if (it == entry.end()) {
        if (required)
            invalid(path, "missing");
        return "";
    }
    if (!it->is_string() || it->get<std::string>().empty())
        invalid(path, "must be a non-empty string");
    std::string text = it->get<std::string>();
    if (text.find_first_of("\r\n") != std::string::npos || text.find('\0') != std::string::npos)
        invalid(path, "must be one line");
    return text;
}

bool is_token(const std::string& text)
{
    return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) {
        return std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string::npos;
    });
}

bool is_variable_name(const std::string& text)
{
    return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
           std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

// The headers that frame or route the request: the proxy must own them.
bool is_framing_header(const std::string& name)
{
    static const std::set<std::string> framing = {"host", "content-length", "transfer-encoding", "connection",
                                                  "upgrade", "te", "trailer", "keep-alive", "expect"};
    return framing.count(ascii_lower(name)) != 0;
}

std::string read_secret(const json& entry, const std::string& field)
{
    std::string inline_secret = text_field(entry, "secret", field, false);
    std::string file = text_field(entry, "secret_file", field, false);
    if (inline_secret.empty() == file.empty())
        invalid(field, "needs exactly one of secret and secret_file");
    if (!file.empty()) {
        auto text = files::read_host_file(file, "a credentials file");
        if (!text)
            invalid(field + ".secret_file", file + " does not exist");
        inline_secret = text->substr(0, text->find_last_not_of("\r\n") + 1);
        if (inline_secret.find_first_of("\r\n") != std::string::npos)
            invalid(field + ".secret_file", file + " must hold one line");
    }
    if (inline_secret.size() < min_secret_length)
        invalid(field, "the secret is shorter than " + std::to_string(min_secret_length) +
                           " characters (the responses' scrub would mask ordinary text)");
    return inline_secret;
}

Credential parse_credential(const std::string& name, const json& entry)
{
    std::string field = "credentials." + name;
    if (!entry.is_object())
        invalid(field, "must be an object");
    static const std::set<std::string> keys = {"host",        "header", "value",       "secret",
                                               "secret_file", "env",    "placeholder", "annotations"};
    for (const auto& [key, _] : entry.items())
        if (keys.count(key) == 0)
            invalid(field + "." + key, "unknown key");
    Credential credential;
    credential.name = name;
    credential.host = policy::parse_host_rule(text_field(entry, "host", field, true) + ":443", field + ".host").host_name;
    if (credential.host.empty())
        invalid(field + ".host", "must be a host name, not an address");
    credential.header = text_field(entry, "header", field, true);
    if (!is_token(credential.header) || is_framing_header(credential.header))
        invalid(field + ".header", "must name a header that does not frame the request (Authorization, X-Api-Key...)");
    std::string value = text_field(entry, "value", field, false); // "" only when absent
    if (value.empty())
        value = "Bearer {secret}";
    size_t mark = value.find(secret_mark);
    if (mark == std::string::npos || value.find(secret_mark, mark + 1) != std::string::npos)
        invalid(field + ".value", "must hold {secret} once");
    credential.secret = read_secret(entry, field);
    credential.value = value.replace(mark, std::string_view(secret_mark).size(), credential.secret);
    credential.placeholder = text_field(entry, "placeholder", field, false);
    if (credential.placeholder.empty())
        credential.placeholder = "cerberus-credential-" + name;
    if (credential.placeholder.find(credential.secret) != std::string::npos)
        invalid(field + ".placeholder", "must not hold the secret");
    credential.env = text_field(entry, "env", field, false);
    if (!credential.env.empty() && !is_variable_name(credential.env))
        invalid(field + ".env", "must be a variable name");
    if (auto it = entry.find("annotations"); it != entry.end()) {
        if (!it->is_object())
            invalid(field + ".annotations", "must be an object of strings");
        for (const auto& [key, wanted] : it->items()) {
            if (!wanted.is_string())
                invalid(field + ".annotations." + key, "must be a string");
            credential.annotations[key] = wanted.get<std::string>();
        }
    }
    return credential;
}

std::vector<Credential> parse_credentials(const json& section)
{
    if (!section.is_object())
        invalid("credentials", "must be an object of named credentials");
    std::vector<Credential> credentials;
    std::set<std::string> hosts;
    for (const auto& [name, entry] : section.items()) {
        if (name.empty() || !std::all_of(name.begin(), name.end(), [](unsigned char c) {
                return std::isalnum(c) || c == '-' || c == '_' || c == '.';
            }))
            invalid("credentials." + name, "a name is letters, digits, '-', '_' and '.'");
        credentials.push_back(parse_credential(name, entry));
        if (!hosts.insert(credentials.back().host).second)
            invalid("credentials." + name + ".host", credentials.back().host + " has another credential too");
    }
    return credentials;
}

} // namespace

HostConfig read_host_config()
{
    auto text = files::read_host_file(host_config_path, "the egress proxy's configuration");
    return text ? parse_host_config(*text) : HostConfig{};
}

HostConfig parse_host_config(const std::string& text)
{
    HostConfig config;
    json document;
    try {
        document = json::parse(text);
    } catch (const json::exception& e) {
        throw Error(std::string(host_config_path) + ": " + e.what(), EINVAL);
    }
    if (!document.is_object())
        invalid("the document", "must be an object");
    for (const auto& [key, _] : document.items())
        if (key != "upstream_ca" && key != "credentials")
            invalid(key, "unknown key (upstream_ca, credentials)");
    config.upstream_ca = text_field(document, "upstream_ca", "", false);
    if (auto it = document.find("credentials"); it != document.end())
        config.credentials = parse_credentials(*it);
    return config;
}

std::vector<Credential> credentials_for(const std::vector<Credential>& credentials,
                                        const std::map<std::string, std::string>& annotations)
{
    std::vector<Credential> chosen;
    for (const auto& credential : credentials)
        if (std::all_of(credential.annotations.begin(), credential.annotations.end(), [&](const auto& wanted) {
                auto it = annotations.find(wanted.first);
                return it != annotations.end() && it->second == wanted.second;
            }))
            chosen.push_back(credential);
    return chosen;
}

const Credential* credential_for_host(const std::vector<Credential>& credentials, const std::string& host)
{
    const Credential* best = nullptr;
    for (const auto& credential : credentials) {
        if (!policy::host_name_matches(credential.host, host))
            continue;
        bool exact = !credential.host.starts_with("*.");
        bool best_exact = best && !best->host.starts_with("*.");
        if (!best || (exact && !best_exact) || (exact == best_exact && credential.host.size() > best->host.size()))
            best = &credential;
    }
    return best;
}

} // namespace cerberus::egress
