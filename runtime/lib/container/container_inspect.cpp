#include "container/container.hpp"

#include "base/error.hpp"

namespace cerberus::container {

Snapshot inspect(const RuntimeOptions& rt, const std::string& id)
{
    state::Store store(rt.root);
    state::ContainerDir dir = store.open(id, state::Store::Access::read);
    state::ContainerState st = dir.load();
    return {st, state::current_status(st, dir.fifo_path())};
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
