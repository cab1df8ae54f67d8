// SPDX-License-Identifier: Apache-2.0
#include "base/error.hpp"

#include <cstring>

namespace cerberus {

Error::Error(std::string message, int err) : std::runtime_error(std::move(message)), errnum_(err) {}

Error Error::wrap(const std::string& context) const
{
    return Error(context + ": " + what(), errnum_);
}

std::string errno_text(int err)
{
    std::string text = std::strerror(err);
    if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z')
        text[0] = static_cast<char>(text[0] - 'A' + 'a');
    return text;
}

void throw_errno(const std::string& what, int err)
{
    throw Error(what + ": " + errno_text(err), err);
}

void throw_errno(const std::string& what)
{
    throw_errno(what, errno);
}

} // namespace cerberus
