// SPDX-License-Identifier: Apache-2.0
#include "container/container.hpp"

#include "process/hooks.hpp"

namespace cerberus::container {

void start(const RuntimeOptions& rt, const std::string& id)
{
    Opened c = open(rt.root, id);
    c.require(state::Operation::start);
    c.dir.release_init(c.state);
    hooks::run_all_warning_on_failure(c.state.hooks.poststart, "poststart",
                                      state::oci_state_json(c.state, state::Status::running));
}

} // namespace cerberus::container
