// A command line the runtime cannot make sense of.
#pragma once

#include <stdexcept>

namespace cerberus::cli {

struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

} // namespace cerberus::cli
