// SPDX-License-Identifier: Apache-2.0
// Descriptors closed by a thread of their own, off the broker's loop. The broker holds each tool's mount
// namespace (RunningTool::release_mounts) so that the tool's exit does not tear it down: the last
// reference to a mount namespace unmounts its tree and then waits for an expedited RCU grace period
// (namespace_unlock), which on a loaded two-CPU VM took 5 ms and more, in the tool's exit before the broker
// could learn of it. Closed here after the call was answered, it costs neither the call nor the next one.
#pragma once

#include "base/fd.hpp"

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cerberus::broker {

class DeferredClose {
public:
    DeferredClose() = default;
    DeferredClose(const DeferredClose&) = delete;
    DeferredClose& operator=(const DeferredClose&) = delete;
    ~DeferredClose(); // what is queued is closed, the thread joined

    // fd closed soon by the thread (started on the first call); an empty one is ignored. Never throws:
    // when no thread can be started, fd is closed here.
    void close(UniqueFd fd) noexcept;

private:
    void run();

    std::mutex mutex_;
    std::condition_variable queued_;
    std::vector<UniqueFd> queue_;
    bool stopping_ = false;
    std::thread thread_;
};

} // namespace cerberus::broker
