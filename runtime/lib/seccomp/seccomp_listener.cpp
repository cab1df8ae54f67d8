// Hands the seccomp notification fd to the agent at linux.seccomp.listenerPath,
// with the runtime-spec "containerProcessState" message.
#include "seccomp/seccomp.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"

#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <sys/un.h>

#include <cstring>

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

UniqueFd connect_unix(const std::string& path)
{
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof(addr.sun_path))
        throw Error("socket path is longer than " + std::to_string(sizeof(addr.sun_path) - 1) + " bytes",
                    ENAMETOOLONG);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    UniqueFd sock(static_cast<int>(check(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket")));
    check(connect(sock.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), "connect");
    return sock;
}

// The fd rides on the first sendmsg; a short send is completed without it.
void send_with_fd(int sock, const std::string& payload, int fd)
{
    iovec iov{const_cast<char*>(payload.data()), payload.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));

    size_t sent = static_cast<size_t>(check(sendmsg(sock, &msg, MSG_NOSIGNAL), "sendmsg"));
    while (sent < payload.size())
        sent += static_cast<size_t>(
            check(send(sock, payload.data() + sent, payload.size() - sent, MSG_NOSIGNAL), "send"));
}

} // namespace

void send_listener(int listener_fd, const std::string& listener_path, const std::string& state_json,
                   const std::string& metadata)
{
    with_context("sending seccomp listener fd to " + listener_path, [&] {
        std::string payload = container_process_state(state_json, metadata);
        UniqueFd sock = connect_unix(listener_path);
        send_with_fd(sock.get(), payload, listener_fd);
    });
}

} // namespace cerberus::seccomp
