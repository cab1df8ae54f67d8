// process.rlimits: names to RLIMIT_* and applying them in the container's init.
#pragma once

#include "oci/spec.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cerberus::rlimits {

std::optional<int> resource_of(const std::string& name);

void apply(const std::vector<spec::Rlimit>& limits);

} // namespace cerberus::rlimits
