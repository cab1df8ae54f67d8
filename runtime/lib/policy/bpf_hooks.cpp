// SPDX-License-Identifier: Apache-2.0
#include "policy/bpf_hooks.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include <cerrno>
#include <cstring>

namespace cerberus::bpf {

namespace {

using policy::RuleKind;

constexpr RuleKinds hosts = kind_bit(RuleKind::allowed_hosts) | kind_bit(RuleKind::raw_sockets);
constexpr RuleKinds paths = kind_bit(RuleKind::paths) | kind_bit(RuleKind::path_changes) |
                            kind_bit(RuleKind::denied_paths) | kind_bit(RuleKind::unix_sockets);
constexpr RuleKinds bins = kind_bit(RuleKind::allowed_bins) | kind_bit(RuleKind::exec_mappings);
constexpr RuleKinds caps = kind_bit(RuleKind::forbidden_caps);
constexpr RuleKinds escalation = kind_bit(RuleKind::escalation);
// The cgroup namespace keeps the agent in its cgroup (policy_containment), whatever the hooks.
constexpr RuleKinds containment = kind_bit(RuleKind::cgroup_exit);
constexpr RuleKinds other_processes = kind_bit(RuleKind::other_processes);
constexpr RuleKinds every_kind = hosts | paths | bins | caps | escalation | containment | other_processes;

// In the order of bpf/cerberus_policy.bpf.c. Parameter counts are those of
// the kernel's prototypes the programs were written against (Linux 6.1):
// security_mmap_file has no reqprot (the program works the applied
// protection out itself) and security_inode_setattr has one more (mnt_userns);
// every other function takes the hook's parameters.
const std::vector<Hook> hooks = {
    {"cerb_file_open", "file_open", "security_file_open", 1, 1, true, paths},
    {"cerb_bprm_check", "bprm_check_security", "security_bprm_check", 1, 1, true, bins},
    // Arms the policy at the container's first exec: nothing is enforced without it.
    {"cerb_bprm_committed_creds", "bprm_committed_creds", "security_bprm_committed_creds", 1, 1, false, every_kind},
    // Keeps a runtime's set-up task (cerberus exec) from being traced by the container.
    {"cerb_ptrace_access_check", "ptrace_access_check", "security_ptrace_access_check", 2, 2, true,
     escalation | other_processes},
    {"cerb_mmap_file", "mmap_file", "security_mmap_file", 4, 3, true, bins},
    {"cerb_file_mprotect", "file_mprotect", "security_file_mprotect", 3, 3, true, bins},
    {"cerb_socket_connect", "socket_connect", "security_socket_connect", 3, 3, true, hosts | paths},
    {"cerb_unix_stream_connect", "unix_stream_connect", "security_unix_stream_connect", 3, 3, true, paths},
    {"cerb_unix_may_send", "unix_may_send", "security_unix_may_send", 2, 2, true, paths},
    {"cerb_socket_sendmsg", "socket_sendmsg", "security_socket_sendmsg", 3, 3, true, hosts | paths},
    {"cerb_socket_create", "socket_create", "security_socket_create", 4, 4, true, hosts},
    {"cerb_socket_setsockopt", "socket_setsockopt", "security_socket_setsockopt", 3, 3, true, hosts},
    {"cerb_capable", "capable", "security_capable", 4, 4, true, caps},
    {"cerb_bpf", "bpf", "security_bpf", 3, 3, true, escalation},
    {"cerb_perf_event_open", "perf_event_open", "security_perf_event_open", 2, 2, true, escalation},
    {"cerb_kernel_module_request", "kernel_module_request", "security_kernel_module_request", 1, 1, true,
     escalation},
    {"cerb_kernel_read_file", "kernel_read_file", "security_kernel_read_file", 3, 3, true, escalation},
    {"cerb_kernel_load_data", "kernel_load_data", "security_kernel_load_data", 2, 2, true, escalation},
    {"cerb_userns_create", "userns_create", "security_create_user_ns", 1, 1, true, escalation},
    {"cerb_sb_mount", "sb_mount", "security_sb_mount", 5, 5, true, paths | bins},
    {"cerb_move_mount", "move_mount", "security_move_mount", 2, 2, true, paths | bins},
    {"cerb_sb_umount", "sb_umount", "security_sb_umount", 2, 2, true, paths | bins},
    {"cerb_sb_pivotroot", "sb_pivotroot", "security_sb_pivotroot", 2, 2, true, paths | bins},
    {"cerb_path_chroot", "path_chroot", "security_path_chroot", 1, 1, true, paths | bins},
    {"cerb_path_rename", "path_rename", "security_path_rename", 5, 5, true, paths},
    {"cerb_path_link", "path_link", "security_path_link", 3, 3, true, paths},
    {"cerb_path_unlink", "path_unlink", "security_path_unlink", 2, 2, true, paths},
    {"cerb_path_rmdir", "path_rmdir", "security_path_rmdir", 2, 2, true, paths},
    {"cerb_path_mkdir", "path_mkdir", "security_path_mkdir", 3, 3, true, paths},
    {"cerb_path_mknod", "path_mknod", "security_path_mknod", 4, 4, true, paths},
    {"cerb_path_symlink", "path_symlink", "security_path_symlink", 3, 3, true, paths},
    {"cerb_path_truncate", "path_truncate", "security_path_truncate", 1, 1, true, paths},
    {"cerb_path_chmod", "path_chmod", "security_path_chmod", 2, 2, true, paths},
    {"cerb_path_chown", "path_chown", "security_path_chown", 3, 3, true, paths},
    // Kernel functions, traced in both sets (no LSM hook): the mount an inode change goes through.
    {"cerb_mnt_want_write", nullptr, "mnt_want_write", 1, 1, false, paths},
    {"cerb_mnt_want_write_file", nullptr, "mnt_want_write_file", 1, 1, false, paths},
    // security_inode_setattr takes mnt_userns first, which the 6.1 LSM hook is not given.
    {"cerb_inode_setattr", "inode_setattr", "security_inode_setattr", 2, 3, true, paths},
    {"cerb_inode_setxattr", "inode_setxattr", "security_inode_setxattr", 6, 6, true, paths},
    {"cerb_inode_removexattr", "inode_removexattr", "security_inode_removexattr", 3, 3, true, paths},
};

// The id of the kernel's own BTF object, by which the kernel names the
// function a tracing link attaches to (modules' BTF objects have others).
unsigned vmlinux_btf_object()
{
    __u32 id = 0;
    while (bpf_btf_get_next_id(id, &id) == 0) {
        UniqueFd btf(bpf_btf_get_fd_by_id(id));
        if (!btf)
            continue; // unloaded since it was listed
        char name[sizeof("vmlinux")] = {};
        bpf_btf_info info{};
        info.name = reinterpret_cast<__u64>(name);
        info.name_len = sizeof(name);
        __u32 length = sizeof(info);
        if (bpf_obj_get_info_by_fd(btf.get(), &info, &length) == 0 && info.kernel_btf &&
            std::strcmp(name, "vmlinux") == 0)
            return id;
    }
    throw Error("finding the kernel's BTF among its BTF objects: none is vmlinux", ENOENT);
}

} // namespace

const std::vector<Hook>& policy_hooks()
{
    return hooks;
}

const Hook* find_hook(const std::string& program)
{
    for (const auto& hook : hooks) {
        if (program == hook.program)
            return &hook;
    }
    return nullptr;
}

std::string attach_function(const Hook& hook, ProgramSet set)
{
    return set == ProgramSet::bpf_lsm && hook.lsm_hook ? std::string("bpf_lsm_") + hook.lsm_hook : hook.function;
}

void BtfDeleter::operator()(struct btf* btf) const
{
    btf__free(btf);
}

KernelBtf load_kernel_btf()
{
    KernelBtf kernel_btf(btf__load_vmlinux_btf());
    if (!kernel_btf)
        throw_errno("the kernel has no BTF to attach to (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)");
    return kernel_btf;
}

std::optional<std::string> hook_unavailable(const struct btf* kernel_btf, const Hook& hook, ProgramSet set)
{
    std::string function = attach_function(hook, set);
    int id = btf__find_by_name_kind(kernel_btf, function.c_str(), BTF_KIND_FUNC);
    if (id < 0)
        return function + " is not in the kernel's BTF (not built, or inlined into its callers)";
    const btf_type* proto = btf__type_by_id(kernel_btf, btf__type_by_id(kernel_btf, id)->type);
    if (!proto || !btf_is_func_proto(proto))
        return function + " has no prototype in the kernel's BTF";
    unsigned expected = set == ProgramSet::bpf_lsm ? hook.lsm_params : hook.function_params;
    if (btf_vlen(proto) != expected)
        return function + " takes " + std::to_string(btf_vlen(proto)) + " parameters in this kernel, the program " +
               std::to_string(expected);
    // fmod_ret replaces the return value: a function returning nothing cannot be denied that way.
    if (set == ProgramSet::fmod_ret && hook.denies && proto->type == 0)
        return function + " returns nothing in this kernel";
    return std::nullopt;
}

TrampolineUse trampoline_use()
{
    unsigned vmlinux = vmlinux_btf_object();
    TrampolineUse use;
    __u32 id = 0;
    int err;
    while ((err = bpf_link_get_next_id(id, &id)) == 0) {
        UniqueFd link(bpf_link_get_fd_by_id(id));
        if (!link)
            continue; // detached since it was listed
        bpf_link_info info{};
        __u32 length = sizeof(info);
        if (bpf_obj_get_info_by_fd(link.get(), &info, &length) == 0 && info.type == BPF_LINK_TYPE_TRACING &&
            info.tracing.target_obj_id == vmlinux)
            ++use[info.tracing.target_btf_id];
    }
    if (err != -ENOENT)
        throw Error("listing the kernel's BPF links to count trampoline slots: " + errno_text(-err), -err);
    return use;
}

std::optional<std::string> trampoline_full(const struct btf* kernel_btf, const Hook& hook, ProgramSet set,
                                           const TrampolineUse& use)
{
    std::string function = attach_function(hook, set);
    int id = btf__find_by_name_kind(kernel_btf, function.c_str(), BTF_KIND_FUNC);
    auto held = id < 0 ? use.end() : use.find(static_cast<unsigned>(id));
    if (held == use.end() || held->second < trampoline_capacity)
        return std::nullopt;
    return function + "'s trampoline already holds " + std::to_string(held->second) +
           " programs, the most the kernel allows";
}

RuleKinds covered_kinds(const std::set<std::string>& programs)
{
    RuleKinds covered = every_kind;
    for (const auto& hook : hooks) {
        if (!programs.count(hook.program))
            covered &= ~hook.kinds;
    }
    return covered;
}

} // namespace cerberus::bpf
