// SPDX-License-Identifier: Apache-2.0
// Compiling a Docker-sized profile for three architectures costs libseccomp
// about 9 ms, most of a create; the exported program only depends on the
// profile, the library and the kernel, so it is kept on disk and reused.
#include "seccomp/seccomp.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <seccomp.h>
#include <spdlog/spdlog.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

namespace cerberus::seccomp {

namespace {

// Raised when compile() makes another program of the same profile (2: the
// ENOSYS stub before libseccomp's program).
constexpr uint32_t kFormat = 2;

void put(std::string& key, std::string_view field)
{
    key += std::to_string(field.size());
    key += ':';
    key += field;
}

void put(std::string& key, uint64_t value)
{
    put(key, std::to_string(value));
}

void put(std::string& key, std::optional<uint32_t> value)
{
    put(key, value ? std::to_string(*value) : std::string("none"));
}

// Everything compile() reads, length-prefixed so that distinct inputs never
// give the same key.
std::string cache_key(const spec::Seccomp& config)
{
    std::string key;
    put(key, uint64_t{kFormat});
    const scmp_version* version = seccomp_version();
    put(key, std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
                 std::to_string(version->micro));
    utsname uts{};
    uname(&uts);
    put(key, uts.release);
    put(key, uts.version);
    put(key, uts.machine);

    put(key, config.default_action);
    put(key, config.default_errno_ret);
    put(key, uint64_t{config.architectures.size()});
    for (const auto& arch : config.architectures)
        put(key, arch);
    put(key, uint64_t{config.flags.size()});
    for (const auto& flag : config.flags)
        put(key, flag);
    put(key, uint64_t{config.syscalls.size()});
    for (const auto& rule : config.syscalls) {
        put(key, uint64_t{rule.names.size()});
        for (const auto& name : rule.names)
            put(key, name);
        put(key, rule.action);
        put(key, rule.errno_ret);
        put(key, uint64_t{rule.args.size()});
        for (const auto& arg : rule.args) {
            put(key, uint64_t{arg.index});
            put(key, arg.value);
            put(key, arg.value_two);
            put(key, arg.op);
        }
    }
    return key;
}

std::string file_name(const std::string& key)
{
    uint64_t hash = 0xcbf29ce484222325; // FNV-1a
    for (unsigned char c : key)
        hash = (hash ^ c) * 0x100000001b3;
    char name[32];
    std::snprintf(name, sizeof(name), "%016llx.bpf", static_cast<unsigned long long>(hash));
    return name;
}

// Layout: key size (u32), key, flags (u32), program. The stored key is
// compared in full, so a hash collision is a miss.
std::optional<CompiledSeccomp> load(const std::string& path, const std::string& key)
{
    std::optional<std::string> file;
    try {
        file = files::read_file_if_exists(path);
    } catch (const Error&) {
    }
    if (!file)
        return std::nullopt;
    const std::string& data = *file;

    const size_t header = sizeof(uint32_t) + key.size() + sizeof(uint32_t);
    if (data.size() < header || (data.size() - header) % sizeof(sock_filter) != 0)
        return std::nullopt;
    uint32_t key_size = 0;
    std::memcpy(&key_size, data.data(), sizeof(key_size));
    if (key_size != key.size() || data.compare(sizeof(uint32_t), key.size(), key) != 0)
        return std::nullopt;
    CompiledSeccomp compiled;
    std::memcpy(&compiled.flags, data.data() + header - sizeof(uint32_t), sizeof(uint32_t));
    compiled.program.resize((data.size() - header) / sizeof(sock_filter));
    std::memcpy(compiled.program.data(), data.data() + header, data.size() - header);
    return compiled;
}

// Written to a temporary file and renamed, so readers see whole entries only.
void store(const std::string& dir, const std::string& path, const std::string& key, const CompiledSeccomp& compiled)
{
    std::filesystem::create_directories(dir);
    std::string data;
    const uint32_t key_size = static_cast<uint32_t>(key.size());
    const uint32_t flags = compiled.flags;
    data.append(reinterpret_cast<const char*>(&key_size), sizeof(key_size));
    data += key;
    data.append(reinterpret_cast<const char*>(&flags), sizeof(flags));
    data.append(reinterpret_cast<const char*>(compiled.program.data()),
                compiled.program.size() * sizeof(sock_filter));

    files::write_file_atomic(path, data);
}

} // namespace

CompiledSeccomp compile_cached(const spec::Seccomp& config, const std::string& cache_dir)
{
    const std::string key = cache_key(config);
    const std::string path = cache_dir + "/" + file_name(key);
    if (auto cached = load(path, key))
        return std::move(*cached);

    CompiledSeccomp compiled = compile(config);
    try {
        store(cache_dir, path, key, compiled);
    } catch (const std::exception& e) {
        // The cache only saves time: failing to fill it must not fail a create.
        spdlog::debug("seccomp cache: {}", e.what());
    }
    return compiled;
}

} // namespace cerberus::seccomp
