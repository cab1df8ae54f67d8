// SPDX-License-Identifier: Apache-2.0
// Hands the seccomp notification fd to the agent at linux.seccomp.listenerPath,
// with the runtime-spec "containerProcessState" message; and the supervisor's
// side of a listener the runtime holds itself.
#include "seccomp/seccomp.hpp"

#include "base/error.hpp"
#include "base/unix_socket.hpp"

#include <sys/ioctl.h>

#include <nlohmann/json.hpp>

namespace cerberus::seccomp {

namespace {

std::string container_process_state(const std::string& state_json, const std::string& metadata)
{
    try {
        auto state = nlohmann::json::parse(state_json);
        nlohmann::json message = {
            {"ociVersion", state.at("ociVersion")},
            {"fds", {"seccompFd"}},
            {"pid", state.at("pid")},
            {"state", state},
        };
        if (!metadata.empty())
            message["metadata"] = metadata;
        return message.dump();
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("container state: ") + e.what(), EINVAL);
    }
}

} // namespace

void send_listener(int listener_fd, const std::string& listener_path, const std::string& state_json,
                   const std::string& metadata)
{
    std::string payload = container_process_state(state_json, metadata);
    // runc's words, which engines and runc's tests look for.
    UniqueFd sock = with_context("failed to connect with seccomp agent " + listener_path,
                                 [&] { return unix_socket::connect(listener_path); });
    with_context("sending seccomp listener fd to " + listener_path,
                 [&] { unix_socket::send_with_fd(sock.get(), payload, listener_fd); });
}

std::optional<seccomp_notif> receive_notification(int listener_fd)
{
    seccomp_notif notification{};
    if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_RECV, &notification) < 0) {
        if (errno == ENOENT || errno == EINTR || errno == EAGAIN)
            return std::nullopt;
        throw_errno("reading a seccomp notification");
    }
    return notification;
}

bool notification_valid(int listener_fd, uint64_t id)
{
    return ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

void let_through(int listener_fd, uint64_t id)
{
    seccomp_notif_resp response{};
    response.id = id;
    response.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    if (ioctl(listener_fd, SECCOMP_IOCTL_NOTIF_SEND, &response) < 0 && errno != ENOENT)
        throw_errno("letting a call through (SECCOMP_IOCTL_NOTIF_SEND)");
}

} // namespace cerberus::seccomp
