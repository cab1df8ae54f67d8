// SPDX-License-Identifier: Apache-2.0
// The audit collector's reader of the ring buffer: a thread of its own that
// only copies events out and tells the BPF programs what it took
// (cerb_event_acct.consumed), so that a container's share of the buffer
// (CERB_EVENTS_PER_CONTAINER) frees up as fast as its events come, however
// long writing them takes and whatever else the collector is doing. The
// collector writes what the drain took (take) when ready_fd() is readable.
#pragma once

#include "base/fd.hpp"
#include "kernel/pinned_maps.hpp"

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

struct ring_buffer;

namespace cerberus::audit {

struct DrainedEvent {
    cerb_event event;
    std::shared_ptr<const std::string> exe; // the sender's binary, read as the event was taken
};

class EventDrain {
public:
    // Events taken and not yet written, at most: past it the drain leaves
    // events in the ring buffer, where the programs count what no longer
    // fits as lost. About 95 MB.
    static constexpr size_t backlog_limit = 262144;

    // Reads the pinned ring buffer and commits to the pinned cerb_event_acct.
    EventDrain();
    ~EventDrain(); // stops the thread
    EventDrain(const EventDrain&) = delete;
    EventDrain& operator=(const EventDrain&) = delete;

    // Readable (an eventfd) when events wait to be taken.
    int ready_fd() const { return ready_.get(); }
    // Everything drained so far into events (emptied first; its capacity is
    // reused, so that a burst allocates once).
    void take(std::vector<DrainedEvent>& events);
    // Has the thread drain the buffer now and returns once it has: every
    // event sent before the call then waits to be taken. False when the
    // backlog was full and the buffer left as it was: take, then ask again.
    bool drain_now();

    // A container's accounting, read and written under the lock the
    // thread's commits take (both write the same map value).
    cerb_event_acct acct(uint64_t cgroup_id);
    void set_lost_reported(uint64_t cgroup_id, uint64_t lost_reported);
    void forget(uint64_t cgroup_id);

private:
    static int on_event(void* self, void* data, size_t size);
    void run();
    std::optional<size_t> drain(); // how many events it took; nullopt when the backlog was full
    void commit();

    UniqueFd events_, acct_map_, ready_, wake_, epoll_;
    std::unique_ptr<ring_buffer, void (*)(ring_buffer*)> ring_;
    // The thread's alone.
    std::map<uint64_t, uint32_t> unacked_;
    uint32_t since_commit_ = 0;
    std::unordered_map<uint32_t, std::shared_ptr<const std::string>> exes_; // pids get reused: one drain
    size_t room_ = 0; // events this drain may still take
    // Shared with the collector.
    std::mutex lock_;
    std::condition_variable drained_cv_;
    std::vector<DrainedEvent> ready_events_;
    uint64_t requested_ = 0, done_ = 0; // drain_now's rounds
    bool done_read_ring_ = true;         // whether round done_ read the ring buffer
    bool stop_ = false;
    std::mutex acct_lock_;
    std::thread thread_;
};

} // namespace cerberus::audit
