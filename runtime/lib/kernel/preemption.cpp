// SPDX-License-Identifier: Apache-2.0
#include "kernel/preemption.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "kernel/boot_record.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>

namespace cerberus::kernel {
namespace {

constexpr const char* record = "/run/cerberus-enforcement/preemption";
constexpr const char* debugfs_file = "/sys/kernel/debug/sched/preempt";

// "none voluntary (full) lazy" -> "full"
std::optional<std::string> current_mode(const std::string& text)
{
    size_t open = text.find('(');
    size_t close = text.find(')', open);
    if (open == std::string::npos || close == std::string::npos)
        return std::nullopt;
    return text.substr(open + 1, close - open - 1);
}

// The file's text, read by a child that mounts debugfs in a mount namespace of its own (the host's mounts are
// left as they are).
std::optional<std::string> read_debugfs_privately()
{
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        return std::nullopt;
    UniqueFd in(pipe_fds[0]), out(pipe_fds[1]);
    pid_t child = fork();
    if (child < 0)
        return std::nullopt;
    if (child == 0) {
        if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
            mount("debugfs", "/sys/kernel/debug", "debugfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
            _exit(1);
        char buf[256];
        int fd = open(debugfs_file, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
        _exit(n > 0 && write(out.get(), buf, static_cast<size_t>(n)) == n ? 0 : 1);
    }
    out.reset();
    std::string text;
    std::array<char, 256> buf{};
    for (ssize_t n; (n = read(in.get(), buf.data(), buf.size())) > 0;)
        text.append(buf.data(), static_cast<size_t>(n));
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return text.empty() ? std::nullopt : std::optional(text);
}

std::optional<std::string> probe()
{
    std::optional<std::string> text;
    try {
        text = files::read_file_if_exists(debugfs_file);
    } catch (const Error&) { // mounted, but not for reading here (lockdown)
    }
    if (!text || text->empty())
        text = read_debugfs_privately();
    if (text)
        if (auto mode = current_mode(*text))
            return mode;
    // A model fixed when the kernel was built is in its version string.
    utsname host{};
    if (uname(&host) != 0)
        return std::nullopt;
    std::string version = std::string(" ") + host.version + " ";
    if (version.find(" PREEMPT_DYNAMIC ") != std::string::npos)
        return std::nullopt; // chosen at boot: only debugfs says which
    if (version.find(" PREEMPT_RT ") != std::string::npos)
        return "rt";
    if (version.find(" PREEMPT_LAZY ") != std::string::npos)
        return "lazy";
    if (version.find(" PREEMPT ") != std::string::npos)
        return "full";
    return "voluntary"; // none or voluntary: neither preempts kernel code
}

} // namespace

std::optional<std::string> preemption_model()
{
    if (auto known = read_boot_record(record))
        return known->empty() ? std::nullopt : std::optional(*known);
    auto model = probe();
    write_boot_record(record, model.value_or(""));
    return model;
}

bool preempts_kernel_code(const std::string& model)
{
    return model == "full" || model == "lazy" || model == "rt";
}

} // namespace cerberus::kernel
