// SPDX-License-Identifier: Apache-2.0
#include "broker/deferred_close.hpp"

#include <signal.h>

#include <new>
#include <system_error>

namespace cerberus::broker {

DeferredClose::~DeferredClose()
{
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    queued_.notify_one();
    if (thread_.joinable())
        thread_.join();
}

void DeferredClose::close(UniqueFd fd) noexcept
{
    if (!fd)
        return;
    std::unique_lock lock(mutex_);
    if (!thread_.joinable()) {
        try {
            thread_ = std::thread([this] { run(); });
        } catch (const std::system_error&) {
            return; // fd is closed here, as it goes
        }
    }
    try {
        queue_.push_back(std::move(fd));
    } catch (const std::bad_alloc&) {
        return;
    }
    lock.unlock();
    queued_.notify_one();
}

void DeferredClose::run()
{
    sigset_t all; // the broker's signals are its loop's
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    std::unique_lock lock(mutex_);
    for (;;) {
        queued_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        std::vector<UniqueFd> closing = std::move(queue_);
        queue_.clear();
        lock.unlock();
        closing.clear();
        lock.lock();
        if (stopping_ && queue_.empty())
            return;
    }
}

} // namespace cerberus::broker
