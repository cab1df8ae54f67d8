// SPDX-License-Identifier: Apache-2.0
#include "policy/bpf_objects.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "kernel/pinned_maps.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstring>
#include <memory>
#include <vector>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

namespace cerberus::bpf {

namespace {

int forward_libbpf_message(libbpf_print_level level, const char* format, va_list args)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    // Whole: the verifier's log comes as one message, its reason at the end.
    va_list measure;
    va_copy(measure, args);
    int n = vsnprintf(nullptr, 0, format, measure);
    va_end(measure);
    if (n < 0)
        return n;
    std::string message(static_cast<size_t>(n) + 1, '\0');
    vsnprintf(message.data(), message.size(), format, args);
    message.resize(static_cast<size_t>(n));
    while (!message.empty() && message.back() == '\n')
        message.pop_back();
    spdlog::debug("{}", message);
    return n;
}

uint64_t random_seed()
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
        throw_errno("getrandom");
    return seed;
}

uint64_t netns_cookie_here()
{
    UniqueFd sock(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    uint64_t cookie = 0;
    socklen_t length = sizeof(cookie);
    if (!sock || getsockopt(sock.get(), SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &length) < 0)
        return 0; // before Linux 5.14: the socket programs cannot tell, and treat loopback as the host's
    return cookie;
}

// The cookie of the host's network namespace (that of pid 1), asked from a
// child that joins it when the runtime runs in another one.
uint64_t host_netns_cookie(const struct stat& host_netns)
{
    struct stat own {};
    if (stat("/proc/self/ns/net", &own) == 0 && own.st_ino == host_netns.st_ino && own.st_dev == host_netns.st_dev)
        return netns_cookie_here();
    int pipe_fds[2];
    check(pipe2(pipe_fds, O_CLOEXEC), "pipe");
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    pid_t child = fork();
    if (child < 0)
        throw_errno("fork");
    if (child == 0) {
        int ns = open("/proc/1/ns/net", O_RDONLY | O_CLOEXEC); // only reached when pid 1 can be looked at
        uint64_t cookie = ns >= 0 && setns(ns, CLONE_NEWNET) == 0 ? netns_cookie_here() : 0;
        _exit(write(write_end.get(), &cookie, sizeof(cookie)) == sizeof(cookie) ? 0 : 1);
    }
    write_end.reset();
    uint64_t cookie = 0;
    if (read(read_end.get(), &cookie, sizeof(cookie)) != sizeof(cookie))
        cookie = 0;
    waitpid(child, nullptr, 0);
    return cookie;
}

// Deletes every key of the map for which belongs(key) holds.
template <typename Key, typename Belongs>
void delete_matching(int map_fd, const char* map_name, Belongs belongs)
{
    std::vector<Key> doomed;
    Key key{};
    Key next{};
    const Key* previous = nullptr;
    while (bpf_map_get_next_key(map_fd, previous, &next) == 0) {
        if (belongs(next))
            doomed.push_back(next);
        key = next;
        previous = &key;
    }
    if (errno != ENOENT)
        throw_errno(std::string("listing ") + map_name);
    for (const auto& item : doomed) {
        if (bpf_map_delete_elem(map_fd, &item) < 0 && errno != ENOENT)
            throw_errno(std::string("deleting from ") + map_name);
    }
}

template <typename NetKey>
bool net_key_of(const NetKey& key, uint64_t cgroup_id)
{
    return key.cgroup_lo == static_cast<uint32_t>(cgroup_id) && key.cgroup_hi == static_cast<uint32_t>(cgroup_id >> 32);
}

// A pin dir of another layout: its policies map is keyed by the cgroup id in
// every layout, the rest of its keys are not this build's to read.
void remove_policy_entry_only(uint64_t cgroup_id, const std::string& pin_dir, const Error& why)
{
    std::string path = pin_dir + "/" + kernel::policies_map.name;
    UniqueFd map(bpf_obj_get(path.c_str()));
    bpf_map_info info{};
    uint32_t length = sizeof(info);
    if (!map || bpf_obj_get_info_by_fd(map.get(), &info, &length) < 0 || info.key_size != sizeof(cgroup_id))
        throw why;
    if (bpf_map_delete_elem(map.get(), &cgroup_id) < 0 && errno != ENOENT)
        throw_errno("deleting the policy of cgroup " + std::to_string(cgroup_id) + " from " + path);
    spdlog::info("removed the policy entry of cgroup {} from {} (another layout: {}); its other entries stay until "
                 "that directory is removed",
                 cgroup_id, pin_dir, why.what());
}

} // namespace

void forward_libbpf_messages()
{
    libbpf_set_print(forward_libbpf_message);
}

bpf_object_open_opts shared_map_options()
{
    kernel::check_pinned_layouts(); // a clear refusal rather than libbpf's "parameter mismatch"
    bpf_object_open_opts opts{};
    opts.sz = sizeof(opts);
    opts.pin_root_path = CERB_PIN_DIR;
    return opts;
}

void initialize_config(const std::string& pin_dir)
{
    UniqueFd map = kernel::open_map(kernel::config_map, pin_dir);
    uint32_t zero = 0;
    cerb_config config{};
    check(bpf_map_lookup_elem(map.get(), &zero, &config), "reading " + std::string(kernel::config_map.name));
    if (config.path_seed != 0)
        return;
    // The host's network namespace is pid 1's; a runtime that may not look at
    // pid 1 (a sandboxed host) takes its own for it.
    struct stat host_netns {};
    if (stat("/proc/1/ns/net", &host_netns) != 0)
        check(stat("/proc/self/ns/net", &host_netns), "stat /proc/self/ns/net");
    config = {.path_seed = random_seed(),
              .host_netns_cookie = host_netns_cookie(host_netns),
              .host_netns = static_cast<uint32_t>(host_netns.st_ino),
              .pad = 0};
    check(bpf_map_update_elem(map.get(), &zero, &config, BPF_ANY), "writing " + std::string(kernel::config_map.name));
}

std::optional<PolicyMaps> PolicyMaps::open_pinned(const std::string& pin_dir)
{
    auto policies = kernel::open_map_if_pinned(kernel::policies_map, pin_dir);
    if (!policies)
        return std::nullopt;
    PolicyMaps maps;
    maps.policies_ = std::move(*policies);
    maps.net4_ = kernel::open_map(kernel::net4_map, pin_dir);
    maps.net6_ = kernel::open_map(kernel::net6_map, pin_dir);
    maps.paths_ = kernel::open_map(kernel::paths_map, pin_dir);
    maps.config_ = kernel::open_map(kernel::config_map, pin_dir);
    maps.names_ = kernel::open_map(kernel::names_map, pin_dir);
    maps.dns_gates_ = kernel::open_map(kernel::dns_gates_map, pin_dir);
    return maps;
}

uint64_t PolicyMaps::path_seed() const
{
    uint32_t zero = 0;
    cerb_config config{};
    check(bpf_map_lookup_elem(config_.get(), &zero, &config), "reading cerb_config");
    return config.path_seed;
}

bool PolicyMaps::installed(uint64_t cgroup_id) const
{
    cerb_policy policy{};
    return bpf_map_lookup_elem(policies_.get(), &cgroup_id, &policy) == 0;
}

void mark_setup_task(const std::string& pin_dir, pid_t pid, uint64_t cgroup_id)
{
    auto setup_tasks = kernel::open_map_if_pinned(kernel::setup_tasks_map, pin_dir);
    if (!setup_tasks)
        throw Error("the policy of cgroup " + std::to_string(cgroup_id) + " is not loaded: " + pin_dir +
                        " holds no maps",
                    ENOENT);
    // The task storage map is keyed by a pidfd: the mark is on the task itself, never on a reused pid.
    UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd)
        throw_errno("pidfd_open " + std::to_string(pid));
    int key = pidfd.get();
    cerb_setup_task value{.cgroup_id = cgroup_id};
    check(bpf_map_update_elem(setup_tasks->get(), &key, &value, BPF_NOEXIST),
          "marking process " + std::to_string(pid) + " in " + std::string(kernel::setup_tasks_map.name));
}

void PolicyMaps::install(const policy::CompiledPolicy& compiled)
{
    uint64_t cgroup_id = compiled.cgroup_id;
    std::string context = "installing the policy of cgroup " + std::to_string(cgroup_id);
    if (installed(cgroup_id))
        throw Error(context + ": the cgroup already has a policy", EEXIST);
    // BPF_NOEXIST throughout: a failed install must never overwrite, and so
    // never delete, an entry it did not add.
    std::vector<std::pair<int, const void*>> added; // map fd, key
    auto add = [&](int fd, const char* map_name, const void* key, const void* value) {
        if (bpf_map_update_elem(fd, key, value, BPF_NOEXIST) < 0)
            throw_errno(std::string("adding to ") + map_name + (errno == E2BIG ? " (map full)" : ""));
        added.emplace_back(fd, key);
    };
    try {
        for (const auto& entry : compiled.net4)
            add(net4_.get(), kernel::net4_map.name, &entry.key, &entry.value);
        for (const auto& entry : compiled.net6)
            add(net6_.get(), kernel::net6_map.name, &entry.key, &entry.value);
        for (const auto& entry : compiled.paths)
            add(paths_.get(), kernel::paths_map.name, &entry.key, &entry.value);
        add(policies_.get(), kernel::policies_map.name, &cgroup_id, &compiled.policy);
    } catch (const Error& e) {
        for (const auto& [fd, key] : added)
            bpf_map_delete_elem(fd, key);
        throw e.wrap(context);
    }
}

void PolicyMaps::remove(const policy::PolicyKeys& keys)
{
    auto erase = [](int fd, const char* map_name, const void* key) {
        if (bpf_map_delete_elem(fd, key) < 0 && errno != ENOENT)
            throw_errno(std::string("deleting from ") + map_name);
    };
    // Only the DNS gate admits addresses, and only for a policy that names hosts: the others' delete skips
    // the scan of every container's admitted addresses. No entry (a delete cut short): scanned.
    cerb_policy entry{};
    bool names = bpf_map_lookup_elem(policies_.get(), &keys.cgroup_id, &entry) != 0 || (entry.flags & CERB_HAS_NAMES);
    with_context("removing the policy of cgroup " + std::to_string(keys.cgroup_id), [&] {
        erase(policies_.get(), kernel::policies_map.name, &keys.cgroup_id); // first: the programs stop using the rest
        for (const auto& key : keys.net4)
            erase(net4_.get(), kernel::net4_map.name, &key);
        for (const auto& key : keys.net6)
            erase(net6_.get(), kernel::net6_map.name, &key);
        for (const auto& key : keys.paths)
            erase(paths_.get(), kernel::paths_map.name, &key);
    });
    if (names)
        remove_names(keys.cgroup_id);
}

void PolicyMaps::remove_names(uint64_t cgroup_id)
{
    with_context("removing the admitted addresses of cgroup " + std::to_string(cgroup_id), [&] {
        delete_matching<cerb_name_key>(names_.get(), kernel::names_map.name,
                                       [&](const cerb_name_key& key) { return key.cgroup_id == cgroup_id; });
        // The gate deletes its port at forget; a gate that died before it leaves it here.
        if (bpf_map_delete_elem(dns_gates_.get(), &cgroup_id) < 0 && errno != ENOENT)
            throw_errno(std::string("deleting from ") + kernel::dns_gates_map.name);
    });
}

void PolicyMaps::remove_by_scan(uint64_t cgroup_id)
{
    with_context("removing the policy of cgroup " + std::to_string(cgroup_id), [&] {
        if (bpf_map_delete_elem(policies_.get(), &cgroup_id) < 0 && errno != ENOENT)
            throw_errno(std::string("deleting from ") + kernel::policies_map.name);
        delete_matching<cerb_net4_key>(net4_.get(), kernel::net4_map.name,
                                       [&](const cerb_net4_key& key) { return net_key_of(key, cgroup_id); });
        delete_matching<cerb_net6_key>(net6_.get(), kernel::net6_map.name,
                                       [&](const cerb_net6_key& key) { return net_key_of(key, cgroup_id); });
        delete_matching<cerb_path_key>(paths_.get(), kernel::paths_map.name,
                                       [&](const cerb_path_key& key) { return key.cgroup_id == cgroup_id; });
    });
    remove_names(cgroup_id);
}

void install_entries(const policy::CompiledPolicy& compiled, const std::string& keys_file, uint32_t backend_flag)
{
    auto maps = PolicyMaps::open_pinned();
    if (!maps)
        throw Error("installing the policy of cgroup " + std::to_string(compiled.cgroup_id) + ": no maps pinned under " +
                        CERB_PIN_DIR,
                    ENOENT);
    // Written before the entries exist, so no entry is ever without its record.
    files::write_file_atomic(keys_file, policy::encode_keys(policy::keys_of(compiled)), 0600);
    policy::CompiledPolicy marked = compiled;
    marked.policy.flags = (marked.policy.flags & ~CERB_BACKEND_MASK) | backend_flag;
    maps->install(marked);
}

void remove_entries(uint64_t cgroup_id, const std::string& keys_file, const std::string& pin_dir)
{
    std::optional<PolicyMaps> maps;
    try {
        maps = PolicyMaps::open_pinned(pin_dir);
    } catch (const Error& e) {
        if (e.errnum() != EPROTO)
            throw;
        remove_policy_entry_only(cgroup_id, pin_dir, e);
        return;
    }
    if (!maps)
        return;
    auto recorded = files::read_file_if_exists(keys_file);
    if (auto keys = recorded ? policy::decode_keys(*recorded, cgroup_id) : std::nullopt)
        maps->remove(*keys);
    else
        maps->remove_by_scan(cgroup_id);
}

} // namespace cerberus::bpf
