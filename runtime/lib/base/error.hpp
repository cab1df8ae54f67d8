// SPDX-License-Identifier: Apache-2.0
// Errors carry errno and a context chain, e.g.
// "creating cgroup /sys/fs/cgroup/x: mkdir: permission denied".
#pragma once

#include <cerrno>
#include <stdexcept>
#include <string>

namespace cerberus {

class Error : public std::runtime_error {
public:
    Error(std::string message, int err = 0);

    // Errno of the failing syscall, 0 when the error is not a syscall's.
    int errnum() const noexcept { return errnum_; }

    // A new error whose message is "context: <this message>", same errno.
    Error wrap(const std::string& context) const;

private:
    int errnum_;
};

// The text of an errno as runc (Go) spells it: strerror with a lowercase first
// letter ("no such file or directory"). Engines match these words in runtime
// errors (Docker maps "permission denied" to exit status 126).
std::string errno_text(int err);

// Throws Error("what: errno_text(errno)", errno).
[[noreturn]] void throw_errno(const std::string& what);
[[noreturn]] void throw_errno(const std::string& what, int err);

// Returns rc, or throws with errno when rc < 0.
inline long check(long rc, const std::string& what)
{
    if (rc < 0)
        throw_errno(what);
    return rc;
}

// Runs fn and prefixes any Error it throws with context.
template <typename Fn>
auto with_context(const std::string& context, Fn&& fn) -> decltype(fn())
{
    try {
        return fn();
    } catch (const Error& e) {
        throw e.wrap(context);
    }
}

} // namespace cerberus
