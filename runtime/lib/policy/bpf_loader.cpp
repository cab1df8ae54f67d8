// SPDX-License-Identifier: Apache-2.0
#include "policy/bpf_loader.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cerberus_policy.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstring>
#include <memory>
#include <vector>

namespace cerberus::bpf {

namespace {

constexpr const char* refusal_suffix = "; refusing to run the container unprotected";
// Pinned last on load: when it exists, the programs are attached and pinned.
constexpr const char* policies_pin = "cerb_policies";

struct SkeletonDeleter {
    void operator()(cerberus_policy* skeleton) const { cerberus_policy__destroy(skeleton); }
};
struct LinkDeleter {
    void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};

// libbpf's messages (the verifier log among them) go to the debug log.
int forward_libbpf_message(libbpf_print_level level, const char* format, va_list args)
{
    if (level == LIBBPF_DEBUG)
        return 0;
    char text[1024];
    int n = vsnprintf(text, sizeof(text), format, args);
    std::string message(text);
    while (!message.empty() && message.back() == '\n')
        message.pop_back();
    spdlog::debug("{}", message);
    return n;
}

void ensure_mounted(const std::string& dir, const char* type, long magic, const char* data)
{
    struct statfs fs {};
    if (statfs(dir.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == magic)
        return;
    check(mount(type, dir.c_str(), type, MS_NOSUID | MS_NODEV | MS_NOEXEC, data),
          std::string("mounting ") + type + " at " + dir);
}

std::string parent_dir(const std::string& path)
{
    auto slash = path.find_last_of('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

// A subdirectory holds another layout's pins (another version of the runtime,
// whose containers may run): not ours to remove.
void remove_pins(const std::string& pin_dir)
{
    for (const auto& entry : files::list_dir(pin_dir))
        if (unlink((pin_dir + "/" + entry.name).c_str()) < 0 && errno != ENOENT && errno != EISDIR)
            throw_errno("removing pin " + pin_dir + "/" + entry.name);
}

uint64_t random_seed()
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
        throw_errno("getrandom");
    return seed;
}

void load_and_pin(const std::string& pin_dir)
{
    libbpf_set_print(forward_libbpf_message);
    std::unique_ptr<cerberus_policy, SkeletonDeleter> skeleton(cerberus_policy__open());
    if (!skeleton)
        throw_errno("opening the BPF policy object");
    if (int err = cerberus_policy__load(skeleton.get()))
        throw Error("agent policy needs the BPF LSM: the kernel refused to load the LSM programs: " +
                        errno_text(-err) + refusal_suffix,
                    -err);

    struct stat host_netns {};
    check(stat("/proc/1/ns/net", &host_netns), "stat /proc/1/ns/net");
    cerb_config config{.path_seed = random_seed(), .host_netns = static_cast<uint32_t>(host_netns.st_ino)};
    uint32_t zero = 0;
    check(bpf_map_update_elem(bpf_map__fd(skeleton->maps.cerb_config), &zero, &config, BPF_ANY),
          "writing cerb_config");

    try {
        bpf_map* map = nullptr;
        bpf_object__for_each_map(map, skeleton->obj)
        {
            std::string name = bpf_map__name(map);
            if (name.rfind("cerb_", 0) == 0 && name != policies_pin && name != "cerb_scratch")
                check(bpf_map__pin(map, (pin_dir + "/" + name).c_str()), "pinning map " + name);
        }
        bpf_program* program = nullptr;
        bpf_object__for_each_program(program, skeleton->obj)
        {
            std::string name = bpf_program__name(program);
            std::unique_ptr<bpf_link, LinkDeleter> link(bpf_program__attach(program));
            if (!link)
                throw Error("agent policy needs the BPF LSM: attaching " + name + ": " + errno_text(errno) +
                                refusal_suffix,
                            errno);
            check(bpf_link__pin(link.get(), (pin_dir + "/link_" + name).c_str()), "pinning link " + name);
        }
        check(bpf_map__pin(skeleton->maps.cerb_policies, (pin_dir + "/" + policies_pin).c_str()),
              "pinning map cerb_policies");
    } catch (const Error&) {
        remove_pins(pin_dir);
        throw;
    }
}

UniqueFd open_map(const std::string& pin_dir, const char* name, uint32_t key_size, uint32_t value_size)
{
    std::string path = pin_dir + "/" + name;
    UniqueFd fd(bpf_obj_get(path.c_str()));
    if (!fd)
        throw_errno("opening pinned map " + path);
    bpf_map_info info{};
    uint32_t length = sizeof(info);
    check(bpf_obj_get_info_by_fd(fd.get(), &info, &length), "inspecting pinned map " + path);
    if (info.key_size != key_size || info.value_size != value_size)
        throw Error("pinned map " + path + " has another layout (key " + std::to_string(info.key_size) + ", value " +
                        std::to_string(info.value_size) + " bytes; this cerberus expects " +
                        std::to_string(key_size) + ", " + std::to_string(value_size) +
                        "): another cerberus version loaded it; remove " + pin_dir + " once no container runs",
                    EPROTO);
    return fd;
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

} // namespace

void check_kernel_support(const std::string& securityfs)
{
    std::string lsm_file = securityfs + "/lsm";
    with_context("agent policy needs the BPF LSM",
                 [&] { ensure_mounted(securityfs, "securityfs", SECURITYFS_MAGIC, nullptr); });
    std::string list = with_context("agent policy needs the BPF LSM", [&] { return files::read_file(lsm_file); });
    list = list.substr(0, list.find('\n'));
    std::string padded = "," + list + ",";
    if (padded.find(",bpf,") == std::string::npos)
        throw Error("agent policy needs the BPF LSM: \"bpf\" is not in " + lsm_file + " (\"" + list +
                        "\"; boot with lsm=" + list + ",bpf)" + refusal_suffix,
                    EOPNOTSUPP);
}

PolicyMaps PolicyMaps::open_or_load(const std::string& pin_dir)
{
    if (auto pinned = open_pinned(pin_dir)) // the usual case: loaded by an earlier create
        return std::move(*pinned);
    ensure_mounted(parent_dir(pin_dir), "bpf", BPF_FS_MAGIC, "mode=0700");
    if (mkdir(pin_dir.c_str(), 0700) < 0 && errno != EEXIST)
        throw_errno("creating " + pin_dir);
    UniqueFd dir(open(pin_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir)
        throw_errno("opening " + pin_dir);
    check(flock(dir.get(), LOCK_EX), "locking " + pin_dir);
    if (!programs_loaded(pin_dir)) { // another create may have loaded them while we waited
        remove_pins(pin_dir); // whatever a failed load left
        load_and_pin(pin_dir);
    }
    return open_pins(pin_dir);
}

bool programs_loaded(const std::string& pin_dir)
{
    return access((pin_dir + "/" + policies_pin).c_str(), F_OK) == 0;
}

std::optional<PolicyMaps> PolicyMaps::open_pinned(const std::string& pin_dir)
{
    if (!programs_loaded(pin_dir))
        return std::nullopt;
    return open_pins(pin_dir);
}

PolicyMaps PolicyMaps::open_pins(const std::string& pin_dir)
{
    PolicyMaps maps;
    maps.policies_ = open_map(pin_dir, policies_pin, sizeof(uint64_t), sizeof(cerb_policy));
    maps.net4_ = open_map(pin_dir, "cerb_net4", sizeof(cerb_net4_key), sizeof(cerb_net_value));
    maps.net6_ = open_map(pin_dir, "cerb_net6", sizeof(cerb_net6_key), sizeof(cerb_net_value));
    maps.paths_ = open_map(pin_dir, "cerb_paths", sizeof(cerb_path_key), sizeof(cerb_path_value));
    maps.config_ = open_map(pin_dir, "cerb_config", sizeof(uint32_t), sizeof(cerb_config));
    maps.setup_tasks_ = open_map(pin_dir, "cerb_setup_tasks", sizeof(int), sizeof(cerb_setup_task));
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

void PolicyMaps::mark_setup_task(pid_t pid, uint64_t cgroup_id)
{
    // The task storage map is keyed by a pidfd: the mark is on the task itself, never on a reused pid.
    UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd)
        throw_errno("pidfd_open " + std::to_string(pid));
    int key = pidfd.get();
    cerb_setup_task value{.cgroup_id = cgroup_id};
    check(bpf_map_update_elem(setup_tasks_.get(), &key, &value, BPF_NOEXIST),
          "marking process " + std::to_string(pid) + " in cerb_setup_tasks");
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
            add(net4_.get(), "cerb_net4", &entry.key, &entry.value);
        for (const auto& entry : compiled.net6)
            add(net6_.get(), "cerb_net6", &entry.key, &entry.value);
        for (const auto& entry : compiled.paths)
            add(paths_.get(), "cerb_paths", &entry.key, &entry.value);
        add(policies_.get(), policies_pin, &cgroup_id, &compiled.policy);
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
    with_context("removing the policy of cgroup " + std::to_string(keys.cgroup_id), [&] {
        erase(policies_.get(), policies_pin, &keys.cgroup_id); // first: the programs stop using the rest
        for (const auto& key : keys.net4)
            erase(net4_.get(), "cerb_net4", &key);
        for (const auto& key : keys.net6)
            erase(net6_.get(), "cerb_net6", &key);
        for (const auto& key : keys.paths)
            erase(paths_.get(), "cerb_paths", &key);
    });
}

void PolicyMaps::remove_by_scan(uint64_t cgroup_id)
{
    with_context("removing the policy of cgroup " + std::to_string(cgroup_id), [&] {
        if (bpf_map_delete_elem(policies_.get(), &cgroup_id) < 0 && errno != ENOENT)
            throw_errno("deleting from cerb_policies");
        delete_matching<cerb_net4_key>(net4_.get(), "cerb_net4",
                                       [&](const cerb_net4_key& key) { return net_key_of(key, cgroup_id); });
        delete_matching<cerb_net6_key>(net6_.get(), "cerb_net6",
                                       [&](const cerb_net6_key& key) { return net_key_of(key, cgroup_id); });
        delete_matching<cerb_path_key>(paths_.get(), "cerb_paths",
                                       [&](const cerb_path_key& key) { return key.cgroup_id == cgroup_id; });
    });
}

} // namespace cerberus::bpf
