// SPDX-License-Identifier: Apache-2.0
#include "base/served_containers.hpp"

#include "base/daemon.hpp"
#include "base/files.hpp"

#include <cstdlib>

namespace cerberus::daemon {

std::string registration_file(const std::string& run_dir, uint64_t cgroup_id)
{
    return run_dir + "/containers/" + std::to_string(cgroup_id) + ".json";
}

void write_registration_file(const std::string& run_dir, uint64_t cgroup_id, const nlohmann::json& registration)
{
    files::make_dirs(run_dir + "/containers", 0700);
    files::write_file_atomic(registration_file(run_dir, cgroup_id), registration.dump() + "\n", 0600);
}

namespace {

std::string container_request(const std::string& request, const std::function<std::string(uint64_t)>& serve,
                              const std::function<void(uint64_t)>& forget,
                              const std::function<std::string()>& other)
{
    if (request.starts_with("serve "))
        return serve(std::strtoull(request.c_str() + 6, nullptr, 10));
    if (!request.starts_with("forget "))
        return other();
    forget(std::strtoull(request.c_str() + 7, nullptr, 10));
    return "ok";
}

} // namespace

void answer_container_request(int listen_fd, const std::function<std::string(uint64_t)>& serve,
                              const std::function<void(uint64_t)>& forget,
                              const std::function<std::string(const std::string&)>& other)
{
    answer_request(listen_fd, [&](const std::string& request) {
        return container_request(request, serve, forget,
                                 [&] { return other ? other(request) : std::string("unknown request"); });
    });
}

void answer_container_request_of_peer(int listen_fd, const std::function<std::string(uint64_t)>& serve,
                                      const std::function<void(uint64_t)>& forget,
                                      const std::function<std::string(const std::string&, const ucred&)>& other)
{
    answer_request_of_peer(listen_fd, [&](const std::string& request, const ucred& peer) {
        return container_request(request, serve, forget, [&] { return other(request, peer); });
    });
}

std::string serve_registration(const std::string& path, uint64_t cgroup_id, bool served,
                               const std::function<void(const nlohmann::json&)>& add)
{
    try {
        auto text = files::read_file_if_exists(path);
        if (!text)
            return "no registration " + path;
        if (!served)
            add(nlohmann::json::parse(*text));
        return "ok";
    } catch (const std::exception& e) {
        return "serving cgroup " + std::to_string(cgroup_id) + ": " + e.what();
    }
}

} // namespace cerberus::daemon
