// SPDX-License-Identifier: Apache-2.0
// process.rlimits, applied in the container's init (their names: oci/spec_names.hpp).
#pragma once

#include "oci/spec.hpp"

#include <vector>

namespace cerberus::rlimits {

void apply(const std::vector<spec::Rlimit>& limits);

} // namespace cerberus::rlimits
