// SPDX-License-Identifier: Apache-2.0
#include "policy/socket_programs.hpp"

#include "base/error.hpp"
#include "cerberus_sock.skel.h"
#include "cgroup/cgroup_mounts.hpp"
#include "kernel/pinned_maps.hpp"
#include "policy/bpf_objects.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

namespace cerberus::socket_programs {
namespace {

constexpr const char* group = "sock"; // <pin dir>/sock_*: the programs and their owner storage
constexpr const char* keepalive_name = "cerberus-sock-hooks"; // in the cgroup v2 root

struct Program {
    const char* name;
    bpf_attach_type type;
    Set smallest; // the smallest set it is in (sets nest: egress in addresses, addresses in every)
};
constexpr Program programs[] = {
    {"cerb_connect4", BPF_CGROUP_INET4_CONNECT, Set::addresses},
    {"cerb_connect6", BPF_CGROUP_INET6_CONNECT, Set::addresses},
    {"cerb_sendmsg4", BPF_CGROUP_UDP4_SENDMSG, Set::addresses},
    {"cerb_sendmsg6", BPF_CGROUP_UDP6_SENDMSG, Set::addresses},
    {"cerb_recvmsg4", BPF_CGROUP_UDP4_RECVMSG, Set::every}, // the DNS gate's answers
    {"cerb_recvmsg6", BPF_CGROUP_UDP6_RECVMSG, Set::every},
    {"cerb_bind4", BPF_CGROUP_INET4_BIND, Set::every}, // the DNS port
    {"cerb_bind6", BPF_CGROUP_INET6_BIND, Set::every},
    {"cerb_sock_create", BPF_CGROUP_INET_SOCK_CREATE, Set::addresses},
    {"cerb_sock_ops", BPF_CGROUP_SOCK_OPS, Set::addresses}, // where a connect steered to the egress proxy went
    {"cerb_egress", BPF_CGROUP_INET_EGRESS, Set::egress},
};

bool in_set(const Program& program, Set set)
{
    switch (set) {
    case Set::every: return true;
    case Set::addresses: return program.smallest != Set::every;
    case Set::egress: return program.smallest == Set::egress;
    }
    return false;
}

struct SkeletonDeleter {
    void operator()(cerberus_sock* skeleton) const { cerberus_sock__destroy(skeleton); }
};

std::string pin_path(const std::string& name, const std::string& pin_dir)
{
    return pin_dir + "/" + group + "_" + name;
}

UniqueFd open_pin(const std::string& name, const std::string& pin_dir = CERB_PIN_DIR)
{
    std::string path = pin_path(name, pin_dir);
    UniqueFd fd(bpf_obj_get(path.c_str()));
    if (!fd)
        throw_errno("opening " + path);
    return fd;
}

void load_and_pin()
{
    bpf::forward_libbpf_messages();
    auto opts = bpf::shared_map_options();
    std::unique_ptr<cerberus_sock, SkeletonDeleter> skeleton(cerberus_sock__open_opts(&opts));
    if (!skeleton)
        throw_errno("opening the cgroup socket programs");
    if (int err = cerberus_sock__load(skeleton.get()))
        throw Error(std::string("the kernel refused to load the cgroup socket programs: ") + errno_text(-err),
                    -err);
    bpf::initialize_config();
    kernel::pin_group(group, [&](const std::string& prefix) {
        for (const auto& program : programs) {
            bpf_program* prog = bpf_object__find_program_by_name(skeleton->obj, program.name);
            if (!prog)
                throw Error(std::string("the socket object lacks ") + program.name, ENOENT);
            check(bpf_program__pin(prog, (prefix + program.name).c_str()), std::string("pinning ") + program.name);
        }
        check(bpf_map__pin(skeleton->maps.cerb_sock_owner, (std::string(CERB_PIN_DIR) + "/" + kernel::sock_owner_map.name).c_str()),
              "pinning the owner map");
        return bpf_map__fd(skeleton->maps.cerb_sock_owner);
    });
}

// An empty cgroup holding one attachment of each program for as long as the
// host runs: the kernel switches its per-type socket hooks on (patching its
// own code) at the first attachment and off at the last, which would cost
// every create and delete milliseconds whenever no other policed container
// exists. The programs let everything through there (no owner).
std::string keepalive_dir()
{
    std::string unified = cgroups::Mounts::detect().unified;
    return unified.empty() ? "" : unified + "/" + keepalive_name;
}

void hold_hooks_on()
{
    std::string dir = keepalive_dir();
    if (dir.empty() || (mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST))
        throw_errno("creating " + dir);
    UniqueFd fd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        throw_errno("opening " + dir);
    for (const auto& program : programs) {
        UniqueFd prog = open_pin(program.name);
        uint32_t ids[64];
        uint32_t count = 64;
        uint32_t flags = 0;
        if (bpf_prog_query(fd.get(), program.type, 0, &flags, ids, &count) == 0 && count > 0)
            continue; // held already
        check(bpf_prog_attach(prog.get(), fd.get(), program.type, BPF_F_ALLOW_MULTI),
              std::string("attaching ") + program.name + " to " + dir);
    }
}

} // namespace

bool loaded()
{
    return kernel::group_pinned(group);
}

void ensure_loaded()
{
    if (loaded() && access(keepalive_dir().c_str(), F_OK) == 0)
        return;
    kernel::PinDirLock lock;
    if (!loaded()) // another create may have loaded them while we waited
        load_and_pin();
    hold_hooks_on();
}

void attach(int cgroup_dir_fd, uint64_t cgroup_id, Set set)
{
    std::vector<std::pair<UniqueFd, bpf_attach_type>> attached;
    try {
        for (const auto& program : programs) {
            if (!in_set(program, set))
                continue;
            UniqueFd prog = open_pin(program.name);
            check(bpf_prog_attach(prog.get(), cgroup_dir_fd, program.type, BPF_F_ALLOW_MULTI),
                  std::string("attaching ") + program.name + " to cgroup " + std::to_string(cgroup_id));
            attached.emplace_back(std::move(prog), program.type);
        }
        // Each attachment has the storage now; the programs find the policy through it.
        UniqueFd owner = kernel::open_map(kernel::sock_owner_map);
        check(bpf_map_update_elem(owner.get(), &cgroup_id, &cgroup_id, BPF_EXIST),
              "recording the owner of cgroup " + std::to_string(cgroup_id) + "'s socket programs");
    } catch (const Error&) {
        for (const auto& [prog, type] : attached)
            bpf_prog_detach2(prog.get(), cgroup_dir_fd, type);
        throw;
    }
}

void detach(int cgroup_dir_fd, const std::string& pin_dir)
{
    if (!kernel::group_pinned(group, pin_dir))
        return;
    for (const auto& program : programs) {
        UniqueFd prog = open_pin(program.name, pin_dir);
        if (bpf_prog_detach2(prog.get(), cgroup_dir_fd, program.type) < 0 && errno != ENOENT)
            throw_errno(std::string("detaching ") + program.name);
    }
}

} // namespace cerberus::socket_programs
