// SPDX-License-Identifier: Apache-2.0
// update: new cgroup limits for a container, from `--resources FILE|-`
// (linux.resources JSON) or, as in runc only without it, from flags.
#include "base/error.hpp"
#include "base/files.hpp"
#include "commands.hpp"
#include "container/container.hpp"
#include "oci/spec_parse.hpp"
#include "options.hpp"
#include "usage_error.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <iterator>
#include <regex>
#include <utility>

#include <nlohmann/json.hpp>

namespace cerberus::cli {
namespace {

const std::vector<OptionSpec> update_options = {
    {"resources", 'r', true},   {"blkio-weight", 0, true},   {"cpu-period", 0, true},
    {"cpu-quota", 0, true},     {"cpu-share", 0, true},      {"cpu-shares", 0, true},
    {"cpu-rt-period", 0, true}, {"cpu-rt-runtime", 0, true}, {"cpuset-cpus", 0, true},
    {"cpuset-mems", 0, true},   {"memory", 'm', true},       {"memory-reservation", 0, true},
    {"memory-swap", 0, true},   {"kernel-memory", 0, true},  {"kernel-memory-tcp", 0, true},
    {"pids-limit", 0, true},
};

spec::Resources read_resources(const std::string& source)
{
    std::string text = source == "-" ? std::string(std::istreambuf_iterator<char>(std::cin), {})
                                     : files::read_file(source);
    std::string name = source == "-" ? "stdin" : source;
    nlohmann::json resources;
    try {
        resources = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw Error(name + ": invalid JSON: " + e.what(), EINVAL);
    }
    auto parsed = with_context(name, [&] { return spec::parse({{"linux", {{"resources", resources}}}}).linux; });
    return parsed->resources.value_or(spec::Resources{});
}

// Memory sizes as runc takes them: "-1" (no limit), bytes, or a number with
// a binary suffix ("512k", "1.5g", "64MiB").
int64_t parse_memory(const std::string& flag, const std::string& text)
{
    if (text == "-1")
        return -1;
    static const std::regex size(R"(^(\d+(?:\.\d+)?) ?([kKmMgGtTpP])?[iI]?[bB]?$)");
    std::smatch m;
    if (!std::regex_match(text, m, size))
        throw UsageError("invalid value for " + flag + ": invalid size: '" + text + "'");
    double value = std::stod(m[1]);
    if (m[2].matched)
        value *= std::pow(1024.0, std::string("kmgtp").find(static_cast<char>(std::tolower(m[2].str()[0]))) + 1);
    return static_cast<int64_t>(value);
}

template <typename T>
T parse_number(const std::string& flag, const std::string& text)
{
    try {
        size_t used = 0;
        long long v = std::stoll(text, &used);
        if (used == text.size() && std::in_range<T>(v))
            return static_cast<T>(v);
    } catch (const std::exception&) {
    }
    throw UsageError("invalid value for " + flag + ": \"" + text + "\"");
}

template <typename T>
void set_number(const ParsedOptions& opts, const char* flag, std::optional<T>& target)
{
    if (opts.has(flag))
        target = parse_number<T>(flag, opts.get(flag));
}

void apply_flags(const ParsedOptions& opts, spec::Resources& r)
{
    for (auto [flag, target] : std::initializer_list<std::pair<const char*, std::optional<int64_t> spec::MemoryResources::*>>{
             {"memory", &spec::MemoryResources::limit},
             {"memory-swap", &spec::MemoryResources::swap},
             {"memory-reservation", &spec::MemoryResources::reservation},
             {"kernel-memory", &spec::MemoryResources::kernel},
             {"kernel-memory-tcp", &spec::MemoryResources::kernel_tcp}})
        if (opts.has(flag)) {
            if (!r.memory)
                r.memory.emplace();
            (*r.memory).*target = parse_memory(flag, opts.get(flag));
        }

    const auto cpu_flags = {"cpu-period",     "cpu-quota",      "cpu-share",   "cpu-shares",
                            "cpu-rt-period", "cpu-rt-runtime", "cpuset-cpus", "cpuset-mems"};
    if (std::any_of(cpu_flags.begin(), cpu_flags.end(), [&](const char* flag) { return opts.has(flag); })) {
        if (!r.cpu)
            r.cpu.emplace();
        set_number(opts, "cpu-period", r.cpu->period);
        set_number(opts, "cpu-quota", r.cpu->quota);
        set_number(opts, "cpu-share", r.cpu->shares);
        set_number(opts, "cpu-shares", r.cpu->shares);
        set_number(opts, "cpu-rt-period", r.cpu->realtime_period);
        set_number(opts, "cpu-rt-runtime", r.cpu->realtime_runtime);
        r.cpu->cpus = opts.get("cpuset-cpus", r.cpu->cpus);
        r.cpu->mems = opts.get("cpuset-mems", r.cpu->mems);
    }
    if (opts.has("blkio-weight")) {
        if (!r.block_io)
            r.block_io.emplace();
        r.block_io->weight = parse_number<uint16_t>("blkio-weight", opts.get("blkio-weight"));
    }
    set_number(opts, "pids-limit", r.pids_limit);
}

} // namespace

int cmd_update(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, update_options);
    expect_positional(opts, 1, 1, "cerberus update [--resources FILE|-] [--memory SIZE] [--pids-limit N] ... ID");
    spec::Resources resources;
    if (opts.has("resources"))
        resources = read_resources(opts.get("resources"));
    else
        apply_flags(opts, resources);
    container::update(rt, opts.positional[0], resources);
    return 0;
}

} // namespace cerberus::cli
