// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_limits.hpp"

#include <algorithm>

namespace cerberus::dns {

bool TokenBucket::take(Clock::time_point now)
{
    if (last_ != Clock::time_point{}) {
        std::chrono::duration<double> since = now - last_;
        tokens_ = std::min(burst_, tokens_ + since.count() * rate_);
    }
    last_ = now;
    if (tokens_ < 1)
        return false;
    tokens_ -= 1;
    return true;
}

} // namespace cerberus::dns
