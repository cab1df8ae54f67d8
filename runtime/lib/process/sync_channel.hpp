// SPDX-License-Identifier: Apache-2.0
// One-way-at-a-time messages between the runtime (parent) and the container's
// init (child) over a SOCK_SEQPACKET pair: one send is one message.
#pragma once

#include "base/fd.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace cerberus {

enum class SyncMessage : uint32_t {
    parent_ready = 1,   // parent → child: id maps written, cgroup joined
    run_hooks = 2,      // child → parent: mounts done, run prestart/createRuntime
    hooks_done = 3,     // parent → child: go on with createContainer and pivot_root
    child_ready = 4,    // child → parent: set up, about to wait on exec.fifo
    child_error = 5,    // child → parent: payload is the error text, errno in value
    fd_attached = 6,    // child → parent: an fd in SCM_RIGHTS (unix_socket::send_with_fd)
};

struct SyncPacket {
    SyncMessage type;
    int32_t value = 0;
    std::string text;
};

class SyncChannel {
public:
    // A connected pair: first end for the parent, second for the child.
    static std::pair<SyncChannel, SyncChannel> pair();

    explicit SyncChannel(UniqueFd fd) : fd_(std::move(fd)) {}

    void send(SyncMessage type, int32_t value = 0, const std::string& text = {}) const;
    // Throws when the peer closed the channel without a message.
    SyncPacket receive() const;
    // Receives and checks the type; a child_error becomes an Error here.
    SyncPacket expect(SyncMessage type) const;
    // Receives an fd sent with unix_socket::send_with_fd over this channel.
    UniqueFd receive_fd() const;

    int fd() const { return fd_.get(); }
    void close() { fd_.reset(); }

private:
    SyncPacket receive_with_fd(UniqueFd& fd_out) const;

    UniqueFd fd_;
};

// Runs set_up in a child the runtime cloned for stage ("init", "exec"; ps
// shows "cerberus:init"), and never returns: set_up ends in execve, or the
// error that stopped it goes to the parent as child_error (to stderr, as
// "cerberus init: ...", once the channel is closed) and the child exits 1.
[[noreturn]] void run_child(const std::string& stage, SyncChannel& channel, const std::function<void()>& set_up);

} // namespace cerberus
