// SPDX-License-Identifier: Apache-2.0
// What the host-wide daemons that serve containers (the DNS gate, the command
// broker) share past base/daemon: the two requests create and delete send
// them, and the registrations they serve, at start, on request and each tick.
#pragma once

#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include <spdlog/spdlog.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cerberus::daemon {

// The registrations create writes for a daemon, in <run dir>/containers: a
// container's file, written atomically (0600, the directory made 0700).
std::string registration_file(const std::string& run_dir, uint64_t cgroup_id);
void write_registration_file(const std::string& run_dir, uint64_t cgroup_id, const nlohmann::json& registration);

// Answers one request on the listening socket: "serve <cgroup id>" (create)
// with what serve says, "forget <cgroup id>" (delete) with "ok" once forgotten,
// any other with what other says (a daemon's own requests), when given.
void answer_container_request(int listen_fd, const std::function<std::string(uint64_t)>& serve,
                              const std::function<void(uint64_t)>& forget,
                              const std::function<std::string(const std::string&)>& other = nullptr);

// The same, other told who asked (a daemon's own requests that depend on it).
void answer_container_request_of_peer(int listen_fd, const std::function<std::string(uint64_t)>& serve,
                                      const std::function<void(uint64_t)>& forget,
                                      const std::function<std::string(const std::string&, const ucred&)>& other);

// serve's answer for the registration file at path: "ok" once add has served
// it (unless served already: a tick found it first), else why not.
std::string serve_registration(const std::string& path, uint64_t cgroup_id, bool served,
                               const std::function<void(const nlohmann::json&)>& add);

// Each registration not served yet, added (at start, and each tick: a create
// whose request came while the daemon was leaving); one that add refuses is
// logged and forgotten.
template <typename Registration, typename Served, typename Add, typename Forget>
void add_unserved(std::vector<Registration> registrations, Served served, Add add, Forget forget)
{
    for (auto& registration : registrations) {
        uint64_t cgroup_id = registration.cgroup_id;
        if (served(cgroup_id))
            continue;
        try {
            add(std::move(registration));
        } catch (const std::exception& e) {
            spdlog::warn("cgroup {}: {}; forgotten", cgroup_id, e.what());
            forget(cgroup_id);
        }
    }
}

} // namespace cerberus::daemon
