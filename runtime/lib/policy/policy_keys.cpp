// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_keys.hpp"

#include <cstring>

namespace cerberus::policy {
namespace {

constexpr uint32_t format_version = 1;

struct Header {
    uint32_t version;
    uint32_t net4_count;
    uint64_t cgroup_id;
    uint32_t net6_count;
    uint32_t path_count;
};

template <typename Key>
void append(std::string& out, const std::vector<Key>& keys)
{
    out.append(reinterpret_cast<const char*>(keys.data()), keys.size() * sizeof(Key));
}

template <typename Key>
void take(std::string_view& in, std::vector<Key>& keys, uint32_t count)
{
    keys.resize(count);
    if (count) // data() may be null for none, and memcpy must not see a null pointer
        std::memcpy(keys.data(), in.data(), count * sizeof(Key));
    in.remove_prefix(count * sizeof(Key));
}

} // namespace

PolicyKeys keys_of(const CompiledPolicy& compiled)
{
    PolicyKeys keys;
    keys.cgroup_id = compiled.cgroup_id;
    for (const auto& entry : compiled.net4)
        keys.net4.push_back(entry.key);
    for (const auto& entry : compiled.net6)
        keys.net6.push_back(entry.key);
    for (const auto& entry : compiled.paths)
        keys.paths.push_back(entry.key);
    return keys;
}

std::string encode_keys(const PolicyKeys& keys)
{
    Header header{format_version, static_cast<uint32_t>(keys.net4.size()), keys.cgroup_id,
                  static_cast<uint32_t>(keys.net6.size()), static_cast<uint32_t>(keys.paths.size())};
    std::string out(reinterpret_cast<const char*>(&header), sizeof(header));
    append(out, keys.net4);
    append(out, keys.net6);
    append(out, keys.paths);
    return out;
}

std::optional<PolicyKeys> decode_keys(std::string_view data, uint64_t cgroup_id)
{
    Header header{};
    if (data.size() < sizeof(header))
        return std::nullopt;
    std::memcpy(&header, data.data(), sizeof(header));
    data.remove_prefix(sizeof(header));
    uint64_t expected = uint64_t{header.net4_count} * sizeof(cerb_net4_key) +
                        uint64_t{header.net6_count} * sizeof(cerb_net6_key) +
                        uint64_t{header.path_count} * sizeof(cerb_path_key);
    if (header.version != format_version || header.cgroup_id != cgroup_id || data.size() != expected)
        return std::nullopt;
    PolicyKeys keys;
    keys.cgroup_id = cgroup_id;
    take(data, keys.net4, header.net4_count);
    take(data, keys.net6, header.net6_count);
    take(data, keys.paths, header.path_count);
    // Never a key of another container, whatever the file says.
    auto ours = [&](const auto& key) {
        return (uint64_t{key.cgroup_hi} << 32 | key.cgroup_lo) == cgroup_id;
    };
    for (const auto& key : keys.net4)
        if (!ours(key))
            return std::nullopt;
    for (const auto& key : keys.net6)
        if (!ours(key))
            return std::nullopt;
    for (const auto& key : keys.paths)
        if (key.cgroup_id != cgroup_id)
            return std::nullopt;
    return keys;
}

} // namespace cerberus::policy
