#include "base/error.hpp"

#include <cstring>

namespace cerberus {

Error::Error(std::string message, int err) : std::runtime_error(std::move(message)), errnum_(err) {}

Error Error::wrap(const std::string& context) const
{
    return Error(context + ": " + what(), errnum_);
}

void throw_errno(const std::string& what, int err)
{
    throw Error(what + ": " + std::strerror(err), err);
}

void throw_errno(const std::string& what)
{
    throw_errno(what, errno);
}

} // namespace cerberus
