// SPDX-License-Identifier: Apache-2.0
// What a call throws, for tests of error messages.
#pragma once

#include "base/error.hpp"

#include <string>

namespace cerberus::test {

// The message of the cerberus::Error fn throws, "" when it throws none.
inline std::string error_of(auto&& fn)
{
    try {
        fn();
    } catch (const Error& e) {
        return e.what();
    }
    return "";
}

} // namespace cerberus::test
