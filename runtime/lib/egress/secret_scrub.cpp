// SPDX-License-Identifier: Apache-2.0
#include "egress/secret_scrub.hpp"

namespace cerberus::egress {

SecretScrub::SecretScrub(std::string secret) : secret_(std::move(secret)) {}

void SecretScrub::mask(std::string& text) const
{
    for (size_t at = text.find(secret_); at != std::string::npos; at = text.find(secret_, at + secret_.size()))
        text.replace(at, secret_.size(), secret_.size(), '*');
}

std::string SecretScrub::scrubbed(std::string text) const
{
    mask(text);
    return text;
}

std::string_view SecretScrub::feed(std::string_view data)
{
    held_.append(data);
    mask(held_);
    // An occurrence that ends in data begins within secret_.size() - 1 bytes of held_'s end at most.
    size_t keep = std::min(held_.size(), secret_.size() - 1);
    out_.assign(held_, 0, held_.size() - keep);
    held_.erase(0, held_.size() - keep);
    return out_;
}

std::string_view SecretScrub::finish()
{
    out_.swap(held_);
    held_.clear();
    return out_;
}

} // namespace cerberus::egress
