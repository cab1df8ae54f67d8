// SPDX-License-Identifier: Apache-2.0
// The options create and run share.
#pragma once

#include "container/container.hpp"
#include "options.hpp"

#include <vector>

namespace cerberus::cli {

extern const std::vector<OptionSpec> create_options;

container::CreateOptions create_options_from(const ParsedOptions& opts);

} // namespace cerberus::cli
