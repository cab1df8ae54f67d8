// SPDX-License-Identifier: Apache-2.0
#include "process/rlimits.hpp"

#include "base/error.hpp"
#include "oci/spec_names.hpp"

#include <sys/resource.h>

namespace cerberus::rlimits {

void apply(const std::vector<spec::Rlimit>& limits)
{
    for (const auto& l : limits) {
        struct rlimit value = {l.soft, l.hard};
        if (::setrlimit(*spec::rlimit_resource(l.type), &value) != 0)
            throw_errno("setrlimit " + l.type);
    }
}

} // namespace cerberus::rlimits
