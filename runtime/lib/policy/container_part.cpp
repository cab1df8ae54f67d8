// SPDX-License-Identifier: Apache-2.0
#include "policy/container_part.hpp"

#include "base/error.hpp"
#include "policy/bpf_objects.hpp"

namespace cerberus::policy {

void install_container_part(const CompiledPolicy& compiled, const ContainerCgroup& cgroup,
                            const std::string& keys_file, uint32_t backend_flags,
                            std::optional<socket_programs::Set> programs)
{
    bpf::install_entries(compiled, keys_file, backend_flags);
    if (!programs)
        return;
    try {
        socket_programs::attach(cgroup.dir_fd, cgroup.id, *programs);
    } catch (const Error&) {
        bpf::remove_entries(cgroup.id, keys_file);
        throw;
    }
}

void remove_container_part(const ContainerCgroup& cgroup, const std::string& keys_file)
{
    if (cgroup.dir_fd >= 0)
        socket_programs::detach(cgroup.dir_fd, cgroup.pin_dir);
    bpf::remove_entries(cgroup.id, keys_file, cgroup.pin_dir);
}

} // namespace cerberus::policy
