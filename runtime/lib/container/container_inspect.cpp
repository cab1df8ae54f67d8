// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "base/error.hpp"

namespace cerberus::container {

Snapshot inspect(const RuntimeOptions& rt, const std::string& id)
{
    Opened c = open(rt.root, id, state::Store::Access::read);
    return {std::move(c.state), c.status};
}

std::vector<Snapshot> list(const RuntimeOptions& rt)
{
    std::vector<Snapshot> out;
    for (const auto& id : state::Store(rt.root).list()) {
        try {
            out.push_back(inspect(rt, id));
        } catch (const Error&) {
            // Removed while we listed: not an error for list.
        }
    }
    return out;
}

} // namespace cerberus::container
