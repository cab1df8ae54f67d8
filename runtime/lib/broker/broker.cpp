// SPDX-License-Identifier: Apache-2.0
#include "broker/broker.hpp"

#include "base/daemon.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "broker/broker_protocol.hpp"
#include "broker/broker_registry.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstdlib>

namespace cerberus::broker {
namespace {

// Where images keep programs, in PATH's usual order.
constexpr const char* path_dirs[] = {"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"};

// Whether path, resolved inside the rootfs, is the image's own copy of the
// tool: a file of that name. A link to a multi-call binary (busybox's
// /bin/sleep) is left alone: covering its target would cover every applet.
bool image_copy(int root_fd, const std::string& path, const std::string& tool)
{
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(syscall(SYS_openat2, root_fd, path.c_str(), &how, sizeof how)));
    struct stat st{};
    if (!fd || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    char target[4096];
    ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fd.get())).c_str(), target, sizeof target - 1);
    if (n <= 0)
        return false;
    std::string resolved(target, static_cast<size_t>(n));
    return resolved.substr(resolved.rfind('/') + 1) == tool;
}

spec::Mount read_only_bind(const std::string& source, const std::string& destination)
{
    return {destination, "bind", source, {"bind", "ro", "nosuid", "nodev"}};
}

} // namespace

std::string shim_path()
{
    if (const char* path = std::getenv("CERBERUS_SHIM"); path && *path)
        return path;
    return CERBERUS_INSTALL_PREFIX "/libexec/cerberus/cerberus-shim";
}

std::string socket_dir(const std::string& state_dir)
{
    return state_dir + "/broker";
}

void add_mounts(const policy::Policy& policy, spec::Spec& spec, const std::string& rootfs,
                const std::string& state_dir)
{
    if (policy.commands.empty())
        return;
    std::string shim = shim_path();
    struct stat st{};
    if (stat(shim.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
        throw Error("policy.commands: the command shim " + shim +
                        " is missing (install cerberus-shim there, or name it with CERBERUS_SHIM)",
                    ENOENT);
    UniqueFd root(open(rootfs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root)
        throw_errno("opening the rootfs " + rootfs);
    for (const auto& [tool, rule] : policy.commands)
        for (const char* dir : path_dirs) {
            std::string destination = std::string(dir) + "/" + tool;
            // /usr/bin always, so that the name is found; elsewhere, the image's own copy is covered.
            if (std::string(dir) == "/usr/bin" || image_copy(root.get(), destination, tool))
                spec.mounts.push_back(read_only_bind(shim, destination));
        }
    auto sockets = read_only_bind(socket_dir(state_dir), container_socket_dir);
    sockets.options.push_back("noexec");
    spec.mounts.push_back(sockets);
}

void make_socket_dir(const std::string& state_dir)
{
    std::string dir = socket_dir(state_dir);
    if (mkdir(dir.c_str(), 0755) < 0 && errno != EEXIST)
        throw_errno("making " + dir);
}

void register_container(const std::string& id, uint64_t cgroup_id, const std::string& trail,
                        const policy::Policy& policy, const std::string& state_dir)
{
    with_context("registering container " + id + " with the command broker", [&] {
        write_registration({id, cgroup_id, trail, policy.mode == policy::Mode::audit, socket_dir(state_dir),
                            policy.commands});
        try {
            std::string answer = daemon::ask(broker_daemon(), "serve " + std::to_string(cgroup_id), 10);
            if (answer != "ok")
                throw Error(answer, EIO);
        } catch (const Error& e) {
            forget_container(cgroup_id);
            throw Error(std::string(e.what()) + " (the broker's log: " + broker_daemon().path(".log") + ")",
                        e.errnum());
        }
    });
}

void forget_container(uint64_t cgroup_id) noexcept
{
    daemon::forget_registered(broker_daemon(), registration_path(cgroup_id), cgroup_id,
                              [&] { remove_registration(cgroup_id); });
}

void restart_if_needed() noexcept
{
    daemon::restart_if_registered(broker_daemon(), std::string(run_dir) + "/containers");
}

} // namespace cerberus::broker
