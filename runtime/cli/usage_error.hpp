// SPDX-License-Identifier: Apache-2.0
// A command line the runtime cannot make sense of.
#pragma once

#include <stdexcept>

namespace cerberus::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// --help or -h among a command's options: its usage goes to stdout, exit 0.
struct HelpRequested : std::runtime_error {
    using std::runtime_error::runtime_error;
};

} // namespace cerberus::cli
