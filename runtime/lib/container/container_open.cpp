// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

namespace cerberus::container {

Opened open(const std::string& root, const std::string& id, state::Store::Access access)
{
    state::ContainerDir dir = state::Store(root).open(id, access);
    state::ContainerState st = dir.load();
    state::Status status = state::current_status(st, dir);
    return {std::move(dir), std::move(st), status};
}

void Opened::require(state::Operation op) const
{
    if (!state::allows(status, op))
        throw state::refusal(op, status, state.id);
}

} // namespace cerberus::container
