// SPDX-License-Identifier: Apache-2.0
#include "kernel/pinned_maps.hpp"

#include "base/error.hpp"

#include <bpf/bpf.h>

namespace cerberus::kernel {

std::optional<UniqueFd> open_map_if_pinned(const MapLayout& map, const std::string& pin_dir)
{
    std::string path = pin_dir + "/" + map.name;
    UniqueFd fd(bpf_obj_get(path.c_str()));
    if (!fd) {
        if (errno == ENOENT)
            return std::nullopt;
        throw_errno("opening pinned map " + path);
    }
    bpf_map_info info{};
    uint32_t length = sizeof(info);
    check(bpf_obj_get_info_by_fd(fd.get(), &info, &length), "inspecting pinned map " + path);
    if (info.key_size != map.key_size || info.value_size != map.value_size)
        throw Error("pinned map " + path + " has another layout (key " + std::to_string(info.key_size) + ", value " +
                        std::to_string(info.value_size) + " bytes; this cerberus expects " +
                        std::to_string(map.key_size) + ", " + std::to_string(map.value_size) +
                        "): another cerberus version loaded it; remove " + pin_dir + " once no container runs",
                    EPROTO);
    return fd;
}

UniqueFd open_map(const MapLayout& map, const std::string& pin_dir)
{
    if (auto fd = open_map_if_pinned(map, pin_dir))
        return std::move(*fd);
    throw_errno("opening pinned map " + pin_dir + "/" + map.name, ENOENT);
}

void check_pinned_layouts(const std::string& pin_dir)
{
    for (const auto& map : shared_maps)
        open_map_if_pinned(map, pin_dir);
}

} // namespace cerberus::kernel
