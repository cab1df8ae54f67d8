// SPDX-License-Identifier: Apache-2.0
#include "audit/audit_registry.hpp"

#include "audit/audit.hpp"
#include "base/files.hpp"

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace cerberus::audit {

std::string registry_dir()
{
    return std::string(run_dir) + "/containers";
}

std::string registry_entry_path(uint64_t cgroup_id)
{
    return registry_dir() + "/" + std::to_string(cgroup_id);
}

void write_registry_entry(const RegistryEntry& entry)
{
    files::make_dirs(registry_dir(), 0700);
    nlohmann::json j = {{"id", entry.id},
                        {"trail", entry.trail},
                        {"root", entry.root},
                        {"enforcement", entry.enforcement},
                        {"policy", entry.policy},
                        {"audit_log", entry.audit_log},
                        {"calls_observed", entry.calls_observed}};
    if (!entry.brokered.is_null()) {
        j["brokered"] = entry.brokered;
        j["cgroup_dir"] = entry.cgroup_dir;
    }
    files::write_file_atomic(registry_entry_path(entry.cgroup_id), j.dump(), 0600);
}

std::vector<RegistryEntry> read_registry()
{
    std::vector<RegistryEntry> entries;
    for (const auto& dirent : files::list_dir(registry_dir())) {
        char* end = nullptr;
        uint64_t cgroup_id = std::strtoull(dirent.name.c_str(), &end, 10);
        if (*end || end == dirent.name.c_str())
            continue; // a file being written
        std::string path = registry_entry_path(cgroup_id);
        try {
            auto content = files::read_file_if_exists(path);
            if (!content)
                continue; // finished meanwhile
            auto j = nlohmann::json::parse(*content);
            RegistryEntry entry{.cgroup_id = cgroup_id, .id = j.at("id"), .trail = j.at("trail")};
            // An entry written by an older create has only id and trail.
            entry.root = j.value("root", "");
            entry.enforcement = j.value("enforcement", "");
            entry.policy = j.value("policy", nlohmann::json::object());
            entry.audit_log = j.value("audit_log", entry.enforcement == "landlock"); // older: as landlock may
            entry.calls_observed = j.value("calls_observed", false);
            entry.brokered = j.value("brokered", nlohmann::json());
            entry.cgroup_dir = j.value("cgroup_dir", "");
            entries.push_back(std::move(entry));
        } catch (const std::exception& e) {
            spdlog::warn("registry entry {}: {}", path, e.what());
        }
    }
    return entries;
}

} // namespace cerberus::audit
