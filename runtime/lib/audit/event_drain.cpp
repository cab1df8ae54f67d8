// SPDX-License-Identifier: Apache-2.0
#include "audit/event_drain.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup_mounts.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstring>

namespace cerberus::audit {
namespace {

constexpr uint32_t commit_every = 256; // events taken before cerb_event_acct is told
// While events flow, the thread drains at most this often: the kernel wakes
// a reader that has caught up at the next event, and a wake-up per event
// would cost more than the copy. A container's share lasts about 7 ms of the
// fastest denials measured.
constexpr int pace_ms = 1;

void signal_fd(int fd)
{
    uint64_t one = 1;
    if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        spdlog::warn("signalling an eventfd: {}", std::strerror(errno));
}

void clear_fd(int fd)
{
    uint64_t count = 0;
    if (read(fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
        spdlog::warn("reading an eventfd: {}", std::strerror(errno));
}

UniqueFd make_eventfd()
{
    UniqueFd fd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!fd)
        throw_errno("eventfd");
    return fd;
}

// Under cgroup v1's real-time group scheduling, a thread may run real-time
// only in a cpu cgroup given real-time runtime, and a container engine's or a
// test's cgroup has none: the collector starts in whichever cgroup its starter
// runs in. This thread is the host's reader, not its starter's: it moves to
// the cpu hierarchy's root (v1 moves single threads) when the root allows
// real-time runtime. False when there is no such place.
bool move_to_real_time_cgroup()
{
    try {
        auto cpu = cgroups::Mounts::detect().v1_mount("cpu");
        if (!cpu || std::stol(files::read_file(*cpu + "/cpu.rt_runtime_us")) == 0)
            return false;
        files::write_file(*cpu + "/tasks", std::to_string(syscall(SYS_gettid)));
        return true;
    } catch (const std::exception& e) {
        spdlog::warn("moving the ring buffer reader to the cpu cgroup root for a real-time priority: {}", e.what());
        return false;
    }
}

// The thread must run as soon as a burst wakes it, even on a loaded host:
// with an ordinary priority, even nice -20, it was measured waiting 5-15 ms
// on this 2-core host under load, past a container's share. Its work is a
// copy per event with a bounded backlog, and it sleeps between drains, so a
// real-time priority costs the host little (and the kernel's real-time
// throttling caps it). Where that is refused, the highest nice value.
void run_promptly()
{
    sched_param param{};
    param.sched_priority = 1;
    int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
    if (err == EPERM && move_to_real_time_cgroup())
        err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
    if (err == 0)
        return;
    spdlog::warn("the audit collector's ring buffer reader cannot have a real-time priority ({}): a burst of "
                 "denials on a busy host may overflow a container's share, counted as lost",
                 std::strerror(err));
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), -20);
}

} // namespace

std::string process_exe(uint32_t pid)
{
    char buf[4096];
    ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof(buf));
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

EventDrain::EventDrain()
    : events_(kernel::open_map(kernel::events_map)), acct_map_(kernel::open_map(kernel::event_acct_map)),
      ready_(make_eventfd()), wake_(make_eventfd()), epoll_(epoll_create1(EPOLL_CLOEXEC)),
      ring_(ring_buffer__new(events_.get(), on_event, this, nullptr), ring_buffer__free)
{
    ready_events_.reserve(backlog_limit); // see take
    if (!ring_)
        throw_errno(std::string("reading the ring buffer ") + CERB_PIN_DIR + "/" + kernel::events_map.name);
    if (!epoll_)
        throw_errno("epoll_create1");
    epoll_event ring{.events = EPOLLIN, .data = {.u32 = 0}};
    check(epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, ring_buffer__epoll_fd(ring_.get()), &ring), "epoll_ctl");
    epoll_event wake{.events = EPOLLIN, .data = {.u32 = 1}};
    check(epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &wake), "epoll_ctl");
    thread_ = std::thread([this] { run(); });
}

EventDrain::~EventDrain()
{
    {
        std::lock_guard guard(lock_);
        stop_ = true;
    }
    signal_fd(wake_.get());
    thread_.join();
}

// Called with lock_ held, from ring_buffer__consume in drain(). The two
// records the programs send differ in size and share their first fields.
int EventDrain::on_event(void* self, void* data, size_t size)
{
    static_assert(sizeof(cerb_call_event) != sizeof(cerb_event));
    static_assert(offsetof(cerb_call_event, comm) == offsetof(cerb_event, comm));
    auto* drain = static_cast<EventDrain*>(self);
    DrainedEvent drained{};
    if (size == sizeof(cerb_call_event)) {
        auto call = std::make_shared<cerb_call_event>(*static_cast<const cerb_call_event*>(data));
        std::memcpy(&drained.event, call.get(), offsetof(cerb_event, comm) + sizeof(drained.event.comm));
        drained.call = std::move(call);
    } else if (size >= sizeof(cerb_event)) {
        drained.event = *static_cast<const cerb_event*>(data);
    } else {
        return 0;
    }
    const cerb_event& e = drained.event;
    ++drain->unacked_[e.cgroup_id];
    if (++drain->since_commit_ >= commit_every)
        drain->commit();
    auto& exe = drain->exes_[e.pid];
    if (!exe) // read now, while the sender may still run
        exe = std::make_shared<const std::string>(process_exe(e.pid));
    drained.exe = exe;
    drain->ready_events_.push_back(std::move(drained));
    return 0;
}

void EventDrain::commit()
{
    std::lock_guard guard(acct_lock_);
    for (auto& [cgroup_id, count] : unacked_) {
        cerb_event_acct acct{};
        bpf_map_lookup_elem(acct_map_.get(), &cgroup_id, &acct);
        acct.consumed += count;
        if (bpf_map_update_elem(acct_map_.get(), &cgroup_id, &acct, BPF_ANY) < 0)
            spdlog::warn("updating cerb_event_acct for cgroup {}: {}", cgroup_id, std::strerror(errno));
    }
    unacked_.clear();
    since_commit_ = 0;
}

std::optional<size_t> EventDrain::drain()
{
    size_t taken = 0;
    {
        std::lock_guard guard(lock_);
        // A full backlog leaves the events in the ring buffer (libbpf consumes
        // all that is there, so a drain may go past the limit by that much).
        if (ready_events_.size() >= backlog_limit)
            return std::nullopt;
        size_t before = ready_events_.size();
        if (ring_buffer__consume(ring_.get()) < 0)
            spdlog::warn("reading the ring buffer: {}", std::strerror(errno));
        taken = ready_events_.size() - before;
    }
    commit();
    exes_.clear();
    if (taken > 0)
        signal_fd(ready_.get());
    return taken;
}

void EventDrain::run()
{
    run_promptly();
    bool flowing = false;
    for (;;) {
        if (flowing) { // drain again after pace_ms, or sooner when asked
            pollfd request{wake_.get(), POLLIN, 0};
            poll(&request, 1, pace_ms);
        } else { // events or a request
            epoll_event events[2];
            if (epoll_wait(epoll_.get(), events, 2, -1) < 0 && errno != EINTR)
                spdlog::warn("waiting for events: {}", std::strerror(errno));
        }
        clear_fd(wake_.get());
        uint64_t requested;
        {
            std::lock_guard guard(lock_);
            if (stop_)
                return;
            requested = requested_;
        }
        std::optional<size_t> taken = drain();
        {
            std::lock_guard guard(lock_);
            done_ = requested;
            done_read_ring_ = taken.has_value();
            // Also while the backlog is full: the thread looks again once the collector takes.
            flowing = !taken || *taken > 0;
        }
        drained_cv_.notify_all();
    }
}

void EventDrain::take(std::vector<DrainedEvent>& events)
{
    events.clear();
    // Both buffers get the whole backlog's room before they fill: grown during a burst, a buffer was copied
    // whole into one twice its size, and the reader stopped for that copy and the new pages' faults (tens of
    // ms, past a container's share). Room only: the pages are the kernel's until written.
    events.reserve(backlog_limit);
    clear_fd(ready_.get());
    bool was_full;
    {
        std::lock_guard guard(lock_);
        was_full = ready_events_.size() >= backlog_limit;
        ready_events_.swap(events);
    }
    if (was_full)
        signal_fd(wake_.get());
}

bool EventDrain::drain_now()
{
    std::unique_lock guard(lock_);
    uint64_t round = ++requested_;
    signal_fd(wake_.get());
    drained_cv_.wait(guard, [&] { return done_ >= round || stop_; });
    return done_read_ring_ || stop_;
}

cerb_event_acct EventDrain::acct(uint64_t cgroup_id)
{
    std::lock_guard guard(acct_lock_);
    cerb_event_acct acct{};
    bpf_map_lookup_elem(acct_map_.get(), &cgroup_id, &acct);
    return acct;
}

void EventDrain::set_lost_reported(uint64_t cgroup_id, uint64_t lost_reported)
{
    std::lock_guard guard(acct_lock_);
    cerb_event_acct acct{};
    bpf_map_lookup_elem(acct_map_.get(), &cgroup_id, &acct);
    acct.lost_reported = lost_reported;
    bpf_map_update_elem(acct_map_.get(), &cgroup_id, &acct, BPF_ANY);
}

void EventDrain::forget(uint64_t cgroup_id)
{
    std::lock_guard guard(acct_lock_);
    bpf_map_delete_elem(acct_map_.get(), &cgroup_id);
}

} // namespace cerberus::audit
