// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_gate.hpp"

#include "base/daemon.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "dns/dns_gate_registry.hpp"
#include "rootfs/paths.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace cerberus::dns {

std::vector<std::string> container_nameservers(int root_fd)
{
    UniqueFd path = paths::open_regular(root_fd, "etc/resolv.conf");
    std::string text;
    if (path) {
        UniqueFd fd(open(("/proc/self/fd/" + std::to_string(path.get())).c_str(), O_RDONLY | O_CLOEXEC));
        if (!fd)
            throw_errno("reading the container's /etc/resolv.conf");
        char buf[4096];
        for (ssize_t n; (n = read(fd.get(), buf, sizeof(buf))) > 0 && text.size() < 65536;)
            text.append(buf, static_cast<size_t>(n));
    }
    return nameservers_of(text);
}

void register_container(const std::string& id, uint64_t cgroup_id, const std::string& trail,
                        const policy::Policy& policy, const std::vector<std::string>& nameservers,
                        const std::string& egress_dir)
{
    with_context("registering container " + id + " with the DNS gate", [&] {
        write_registration(registration_of(id, cgroup_id, trail, policy, nameservers, egress_dir));
        try {
            std::string answer = daemon::ask(gate_daemon(), "serve " + std::to_string(cgroup_id), 10);
            if (answer != "ok")
                throw Error(answer, EIO);
        } catch (const Error& e) {
            forget_container(cgroup_id);
            throw Error(std::string(e.what()) + " (the gate's log: " + gate_daemon().path(".log") + ")", e.errnum());
        }
    });
}

void forget_container(uint64_t cgroup_id) noexcept
{
    daemon::forget_registered(gate_daemon(), registration_path(cgroup_id), cgroup_id,
                              [&] { remove_registration(cgroup_id); });
}

void restart_if_needed() noexcept
{
    daemon::restart_if_registered(gate_daemon(), std::string(run_dir) + "/containers");
}

std::optional<nlohmann::json> admitted(uint64_t cgroup_id)
{
    if (!files::exists(registration_path(cgroup_id)))
        return std::nullopt;
    try {
        // The gate writes its snapshot at its next tick; asked, it writes it now.
        daemon::ask_running(gate_daemon(), "snapshot " + std::to_string(cgroup_id), 2);
    } catch (const Error& e) {
        spdlog::warn("the DNS gate, writing the snapshot of cgroup {}: {}", cgroup_id, e.what());
    }
    nlohmann::json list = read_admitted_json(cgroup_id);
    for (auto& entry : list)
        entry.erase("expires_ns"); // the gate's own, for its restart
    return list;
}

} // namespace cerberus::dns
