// SPDX-License-Identifier: Apache-2.0
// Command-line options the way runc (urfave/cli) accepts them: `--bundle DIR`,
// `--bundle=DIR`, `-b DIR`, `-bundle DIR`; boolean flags take no value
// (`--force`, `--force=true`).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cerberus::cli {

struct OptionSpec {
    const char* name;
    char short_name; // 0: none
    bool takes_value;
};

class ParsedOptions {
public:
    bool has(const std::string& name) const { return values_.count(name) > 0; }
    // The last value given.
    std::string get(const std::string& name, const std::string& fallback = {}) const;
    // Every value given, in order, for options that may repeat (`--env A --env B`).
    std::vector<std::string> get_all(const std::string& name) const;
    bool flag(const std::string& name) const;
    int get_int(const std::string& name, int fallback) const;

    std::vector<std::string> positional;
    bool help = false; // --help or -h, which every command takes

private:
    friend ParsedOptions parse_options(const std::vector<std::string>&, const std::vector<OptionSpec>&, bool);
    std::map<std::string, std::vector<std::string>> values_;
};

// Parses args against specs. With stop_at_positional, parsing ends at the
// first positional argument (global options come before the command).
ParsedOptions parse_options(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs,
                            bool stop_at_positional = false);

// Throws HelpRequested with usage when --help was given, else a usage error
// when the count of positional arguments is wrong.
void expect_positional(const ParsedOptions& opts, size_t min, size_t max, const char* usage);

} // namespace cerberus::cli
