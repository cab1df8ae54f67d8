// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_netns.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <fcntl.h>
#include <sched.h>

#include <cstring>
#include <exception>
#include <sstream>
#include <thread>

namespace cerberus::dns {
namespace {

constexpr int kernfs_file_handle = 0xfe; // FILEID_KERNFS: a cgroup2 directory by its id

UniqueFd open_cgroup(const std::string& cgroup2, uint64_t cgroup_id)
{
    UniqueFd mount(open(cgroup2.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!mount)
        throw_errno("opening " + cgroup2);
    struct {
        file_handle handle;
        uint64_t id;
    } handle{};
    handle.handle.handle_bytes = sizeof(uint64_t);
    handle.handle.handle_type = kernfs_file_handle;
    std::memcpy(handle.handle.f_handle, &cgroup_id, sizeof(cgroup_id));
    return UniqueFd(open_by_handle_at(mount.get(), &handle.handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

} // namespace

bool cgroup_exists(const std::string& cgroup2, uint64_t cgroup_id)
{
    return static_cast<bool>(open_cgroup(cgroup2, cgroup_id));
}

UniqueFd netns_of_cgroup(const std::string& cgroup2, uint64_t cgroup_id)
{
    std::string where = "cgroup " + std::to_string(cgroup_id);
    UniqueFd dir = open_cgroup(cgroup2, cgroup_id);
    if (!dir)
        throw_errno("opening " + where + " by its id");
    UniqueFd procs(openat(dir.get(), "cgroup.procs", O_RDONLY | O_CLOEXEC));
    if (!procs)
        throw_errno("opening cgroup.procs of " + where);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(procs.get(), buf, sizeof(buf))) > 0;)
        text.append(buf, static_cast<size_t>(n));
    std::istringstream pids(text);
    for (long pid; pids >> pid;) {
        UniqueFd netns(open(("/proc/" + std::to_string(pid) + "/ns/net").c_str(), O_RDONLY | O_CLOEXEC));
        if (netns)
            return netns;
    }
    throw Error(where + " has no process: no network namespace to serve", ESRCH);
}

void in_netns(int netns_fd, const std::function<void()>& make)
{
    std::exception_ptr failure;
    std::thread worker([&] {
        try {
            check(setns(netns_fd, CLONE_NEWNET), "entering the container's network namespace");
            make();
        } catch (...) {
            failure = std::current_exception();
        }
    });
    worker.join();
    if (failure)
        std::rethrow_exception(failure);
}

} // namespace cerberus::dns
