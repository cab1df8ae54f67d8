// SPDX-License-Identifier: Apache-2.0
// A brokered call's stdio, relayed by the broker: the tool gets pipes, and
// a thread per stream copies between them and the caller's stdin, stdout and
// stderr, counting what it moved (the command record's bytes_in and
// bytes_out). The caller's pipes and terminals are reopened non-blocking
// (a file description of the broker's own: the caller's flags are left
// alone), its sockets read and written with MSG_DONTWAIT, its files as they
// are (they never block), so that no thread ever waits where it cannot be
// stopped. What the caller's stdin holds is read as it comes, whether the
// tool reads it or not, until the tool ends. A caller whose stdout and stderr
// are one file (2>&1) gives the tool one pipe for both, so that what the tool
// wrote keeps its order.
#pragma once

#include "base/fd.hpp"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace cerberus::broker {

class StdioRelay {
public:
    // caller: its stdin, stdout and stderr (they are not taken: the relay opens its own).
    explicit StdioRelay(const std::vector<UniqueFd>& caller);
    StdioRelay(const StdioRelay&) = delete;
    StdioRelay& operator=(const StdioRelay&) = delete;
    ~StdioRelay() { stop(); }

    // Stops every thread (whatever they still had to copy is dropped) and joins them. Never throws.
    void stop() noexcept;

    // The tool's stdin, stdout and stderr, for Launch::stdio, until tool_started.
    const int* tool_stdio() const { return tool_fds_; }
    // Once the tool is forked: the broker's copies of its ends closed, the copying started.
    void tool_started();
    // Once the tool was reaped: the input is no longer relayed; what the tool
    // wrote is delivered, then the threads end.
    void tool_ended();
    // Readable once every thread ended (after tool_ended, or a stream's end).
    int done_fd() const { return done_.get(); }
    bool done() const { return running_.load() == 0; }

    uint64_t bytes_in() const { return bytes_in_.load(); }
    uint64_t bytes_out() const { return bytes_out_.load(); }

private:
    void pump_input();
    void pump_output(int from, int to, bool to_socket);
    void thread_done() noexcept;

    UniqueFd caller_[3];
    bool caller_socket_[3] = {false, false, false};
    bool one_output_ = false; // the caller's stdout and stderr are one file: one pipe, one thread
    UniqueFd tool_ends_[3], own_ends_[3]; // tool_ends_: the tool's stdin (read end), stdout, stderr (write ends)
    int tool_fds_[3] = {-1, -1, -1};
    UniqueFd ended_read_, ended_write_;   // closed write end: the tool ended
    UniqueFd abort_read_, abort_write_;   // closed write end: stop now
    UniqueFd done_;                       // an eventfd
    std::atomic<int> running_{0};
    std::atomic<uint64_t> bytes_in_{0}, bytes_out_{0};
    std::vector<std::thread> threads_;
};

} // namespace cerberus::broker
