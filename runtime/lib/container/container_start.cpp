#include "container/container.hpp"

#include "base/error.hpp"
#include "process/hooks.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>


namespace cerberus::container {
namespace {

// Opens exec.fifo for reading, which lets the init's blocked open complete,
// reads its byte, then reads to end of file: the init's write end closes when
// it execs the process (or dies). Gives up if the init dies before the byte.
void release_init(const std::string& fifo_path, const state::ContainerState& st)
{
    UniqueFd fifo(::open(fifo_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fifo)
        throw_errno("open " + fifo_path);
    bool released = false;
    for (;;) {
        struct pollfd p = {fifo.get(), POLLIN, 0};
        int rc = ::poll(&p, 1, 100);
        if (rc < 0 && errno != EINTR)
            throw_errno("poll " + fifo_path);
        char byte;
        ssize_t n = rc > 0 ? ::read(fifo.get(), &byte, 1) : -1;
        if (n == 1)
            released = true;
        else if (n == 0 && released)
            return;
        else if (!released && !state::process_matches(st))
            throw Error("container init exited before start", ESRCH);
    }
}

} // namespace

void start(const RuntimeOptions& rt, const std::string& id)
{
    state::Store store(rt.root);
    state::ContainerDir dir = store.open(id);
    state::ContainerState st = dir.load();
    state::Status status = state::current_status(st, dir.fifo_path());
    switch (status) {
    case state::Status::created: break;
    case state::Status::stopped: throw Error("cannot start a container that has stopped", EINVAL);
    case state::Status::running: throw Error("cannot start an already running container", EINVAL);
    default: throw Error(std::string("cannot start a container in the ") + state::to_string(status) + " state", EINVAL);
    }
    release_init(dir.fifo_path(), st);
    if (::unlink(dir.fifo_path().c_str()) != 0)
        throw_errno("remove " + dir.fifo_path());
    hooks::run_all_warning_on_failure(hooks::from_json(st.hooks_json).poststart, "poststart",
                                      state::oci_state_json(st, state::Status::running));
}

} // namespace cerberus::container
