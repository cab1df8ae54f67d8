// SPDX-License-Identifier: Apache-2.0
#include "options.hpp"

#include "base/error.hpp"
#include "usage_error.hpp"

namespace cerberus::cli {
namespace {

const OptionSpec* find_long(const std::vector<OptionSpec>& specs, const std::string& name)
{
    for (const auto& s : specs)
        if (name == s.name)
            return &s;
    return nullptr;
}

const OptionSpec* find_short(const std::vector<OptionSpec>& specs, char c)
{
    for (const auto& s : specs)
        if (s.short_name && s.short_name == c)
            return &s;
    return nullptr;
}

} // namespace

std::string ParsedOptions::get(const std::string& name, const std::string& fallback) const
{
    auto it = values_.find(name);
    return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> ParsedOptions::get_all(const std::string& name) const
{
    auto it = values_.find(name);
    return it == values_.end() ? std::vector<std::string>{} : it->second;
}

bool ParsedOptions::flag(const std::string& name) const
{
    return has(name) && get(name) != "false";
}

int ParsedOptions::get_int(const std::string& name, int fallback) const
{
    if (!has(name))
        return fallback;
    std::string text = get(name);
    try {
        size_t used = 0;
        int v = std::stoi(text, &used);
        if (used == text.size())
            return v;
    } catch (const std::exception&) {
    }
    throw UsageError("--" + name + ": expected a number, got \"" + text + "\"");
}

ParsedOptions parse_options(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs,
                            bool stop_at_positional)
{
    ParsedOptions out;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--") {
            out.positional.insert(out.positional.end(), args.begin() + i + 1, args.end());
            break;
        }
        if (arg.size() < 2 || arg[0] != '-') {
            if (stop_at_positional) {
                out.positional.insert(out.positional.end(), args.begin() + i, args.end());
                break;
            }
            out.positional.push_back(arg);
            continue;
        }
        std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
        std::string name = body, value;
        bool inline_value = false;
        if (size_t eq = body.find('='); eq != std::string::npos) {
            name = body.substr(0, eq);
            value = body.substr(eq + 1);
            inline_value = true;
        }
        const OptionSpec* spec = find_long(specs, name);
        if (!spec && arg[1] != '-' && name.size() == 1)
            spec = find_short(specs, name[0]);
        if (!spec && !inline_value && (name == "help" || name == "h")) {
            out.help = true;
            continue;
        }
        if (!spec)
            throw UsageError("flag provided but not defined: " + arg);
        if (spec->takes_value && !inline_value) {
            if (i + 1 >= args.size())
                throw UsageError("flag needs an argument: " + arg);
            value = args[++i];
        } else if (!spec->takes_value && !inline_value) {
            value = "true";
        }
        out.values_[spec->name].push_back(value);
    }
    return out;
}

void expect_positional(const ParsedOptions& opts, size_t min, size_t max, const char* usage)
{
    if (opts.help)
        throw HelpRequested(std::string("usage: ") + usage);
    if (opts.positional.size() < min || opts.positional.size() > max)
        throw UsageError(std::string("usage: ") + usage);
}

} // namespace cerberus::cli
