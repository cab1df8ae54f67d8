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

// In the order of bpf/cerberus_policy.bpf.c. Parameters as in prototype_of:
// p pointer, i integer, s struct by value. security_mmap_file has no reqprot
// (the program works the applied protection out itself); a hook's variants
// are one per prototype the kernels we run have (tests/vm/kernels.list):
// bpf gained `kernel` in 6.14, perf_event_open lost its attribute after 6.1,
// and the inode_setattr LSM hook gained the mount's idmap in 6.3, which
// security_inode_setattr always had.
const std::vector<Hook> hooks = {
    {"cerb_file_open", "file_open", "security_file_open", "p", "p", true, paths},
    {"cerb_bprm_check", "bprm_check_security", "security_bprm_check", "p", "p", true, bins},
    // Arms the policy at the container's first exec: nothing is enforced without it.
    {"cerb_bprm_committed_creds", "bprm_committed_creds", "security_bprm_committed_creds", "p", "p", false,
     every_kind},
    // Keeps a runtime's set-up task (cerberus exec) from being traced by the container,
    // and the agent from reaching any process outside its container.
    {"cerb_ptrace_access_check", "ptrace_access_check", "security_ptrace_access_check", "pi", "pi", true,
     escalation | other_processes},
    {"cerb_task_kill", "task_kill", "security_task_kill", "ppip", "ppip", true, other_processes},
    {"cerb_task_setnice", "task_setnice", "security_task_setnice", "pi", "pi", true, other_processes},
    {"cerb_task_setioprio", "task_setioprio", "security_task_setioprio", "pi", "pi", true, other_processes},
    {"cerb_task_setscheduler", "task_setscheduler", "security_task_setscheduler", "p", "p", true, other_processes},
    {"cerb_task_movememory", "task_movememory", "security_task_movememory", "p", "p", true, other_processes},
    // SIGIO and SIGURG through a file's owner: room for the setter made where the call can still be refused,
    // who set it (never refuses), judged at delivery, forgotten.
    {"cerb_file_fcntl", "file_fcntl", "security_file_fcntl", "pii", "pii", true, other_processes},
    {"cerb_file_ioctl", "file_ioctl", "security_file_ioctl", "pii", "pii", true, other_processes},
    // The i386 ABI's ioctl from 6.8 on (before, it goes through file_ioctl).
    {"cerb_file_ioctl_compat", "file_ioctl_compat", "security_file_ioctl_compat", "pii", "pii", true,
     other_processes, true},
    {"cerb_file_set_fowner", "file_set_fowner", "security_file_set_fowner", "p", "p", false, other_processes},
    {"cerb_file_send_sigiotask", "file_send_sigiotask", "security_file_send_sigiotask", "ppi", "ppi", true,
     other_processes},
    {"cerb_file_free_security", "file_free_security", "security_file_free", "p", "p", false, other_processes},
    {"cerb_task_prlimit", "task_prlimit", "security_task_prlimit", "ppi", "ppi", true, other_processes},
    {"cerb_key_permission", "key_permission", "security_key_permission", "ppi", "ppi", true, other_processes},
    {"cerb_key_alloc", "key_alloc", "security_key_alloc", "ppi", "ppi", true, other_processes},
    {"cerb_inode_init_security_anon", "inode_init_security_anon", "security_inode_init_security_anon", "ppp", "ppp",
     true, other_processes},
    {"cerb_mmap_file", "mmap_file", "security_mmap_file", "piii", "pii", true, bins},
    {"cerb_file_mprotect", "file_mprotect", "security_file_mprotect", "pii", "pii", true, bins},
    {"cerb_socket_connect", "socket_connect", "security_socket_connect", "ppi", "ppi", true, hosts | paths},
    {"cerb_unix_stream_connect", "unix_stream_connect", "security_unix_stream_connect", "ppp", "ppp", true, paths},
    {"cerb_unix_may_send", "unix_may_send", "security_unix_may_send", "pp", "pp", true, paths},
    {"cerb_socket_sendmsg", "socket_sendmsg", "security_socket_sendmsg", "ppi", "ppi", true, hosts | paths},
    {"cerb_socket_create", "socket_create", "security_socket_create", "iiii", "iiii", true, hosts},
    {"cerb_socket_setsockopt", "socket_setsockopt", "security_socket_setsockopt", "pii", "pii", true, hosts},
    {"cerb_capable", "capable", "security_capable", "ppii", "ppii", true, caps},
    {"cerb_bpf", "bpf", "security_bpf", "ipi", "ipi", true, escalation},
    {"cerb_bpf_from_kernel", "bpf", "security_bpf", "ipii", "ipii", true, escalation},
    {"cerb_perf_event_open", "perf_event_open", "security_perf_event_open", "pi", "pi", true, escalation},
    {"cerb_perf_event_open_type", "perf_event_open", "security_perf_event_open", "i", "i", true, escalation},
    {"cerb_kernel_module_request", "kernel_module_request", "security_kernel_module_request", "p", "p", true,
     escalation},
    {"cerb_kernel_read_file", "kernel_read_file", "security_kernel_read_file", "pii", "pii", true, escalation},
    {"cerb_kernel_load_data", "kernel_load_data", "security_kernel_load_data", "ii", "ii", true, escalation},
    {"cerb_userns_create", "userns_create", "security_create_user_ns", "p", "p", true, escalation},
    {"cerb_sb_mount", "sb_mount", "security_sb_mount", "pppip", "pppip", true, paths | bins},
    {"cerb_move_mount", "move_mount", "security_move_mount", "pp", "pp", true, paths | bins},
    {"cerb_sb_umount", "sb_umount", "security_sb_umount", "pi", "pi", true, paths | bins},
    {"cerb_sb_pivotroot", "sb_pivotroot", "security_sb_pivotroot", "pp", "pp", true, paths | bins},
    {"cerb_path_chroot", "path_chroot", "security_path_chroot", "p", "p", true, paths | bins},
    {"cerb_path_rename", "path_rename", "security_path_rename", "ppppi", "ppppi", true, paths},
    {"cerb_path_link", "path_link", "security_path_link", "ppp", "ppp", true, paths},
    {"cerb_path_unlink", "path_unlink", "security_path_unlink", "pp", "pp", true, paths},
    {"cerb_path_rmdir", "path_rmdir", "security_path_rmdir", "pp", "pp", true, paths},
    {"cerb_path_mkdir", "path_mkdir", "security_path_mkdir", "ppi", "ppi", true, paths},
    {"cerb_path_mknod", "path_mknod", "security_path_mknod", "ppii", "ppii", true, paths},
    {"cerb_path_symlink", "path_symlink", "security_path_symlink", "ppp", "ppp", true, paths},
    {"cerb_path_truncate", "path_truncate", "security_path_truncate", "p", "p", true, paths},
    {"cerb_path_chmod", "path_chmod", "security_path_chmod", "pi", "pi", true, paths},
    {"cerb_path_chown", "path_chown", "security_path_chown", "pss", "pss", true, paths},
    // Kernel functions, traced in both sets (no LSM hook): the mount an inode change goes through.
    {"cerb_mnt_want_write", nullptr, "mnt_want_write", "p", "p", false, paths},
    {"cerb_mnt_want_write_file", nullptr, "mnt_want_write_file", "p", "p", false, paths},
    {"cerb_inode_setattr", "inode_setattr", "security_inode_setattr", "ppp", "ppp", true, paths},
    {"cerb_inode_setattr_no_idmap", "inode_setattr", "security_inode_setattr", "pp", nullptr, true, paths},
    {"cerb_inode_setxattr", "inode_setxattr", "security_inode_setxattr", "ppppii", "ppppii", true, paths},
    {"cerb_inode_removexattr", "inode_removexattr", "security_inode_removexattr", "ppp", "ppp", true, paths},
    // POSIX ACLs from 6.2 on; before, they are xattrs (inode_setxattr).
    {"cerb_inode_set_acl", "inode_set_acl", "security_inode_set_acl", "pppp", "pppp", true, paths, true},
    {"cerb_inode_remove_acl", "inode_remove_acl", "security_inode_remove_acl", "ppp", "ppp", true, paths, true},
};

// "(int, pointer)" for "ip": prototypes in messages.
std::string spelled(const std::string& letters)
{
    std::string text = "(";
    for (char letter : letters) {
        text += text.size() > 1 ? ", " : "";
        text += letter == 'p' ? "pointer" : letter == 'i' ? "integer" : letter == 's' ? "struct" : "other";
    }
    return text + ")";
}

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

bool in_set(const Hook& hook, ProgramSet set)
{
    return (set == ProgramSet::bpf_lsm ? hook.lsm_params : hook.function_params) != nullptr;
}

std::string prototype_of(const struct btf* kernel_btf, int function_id)
{
    const btf_type* proto = btf__type_by_id(kernel_btf, btf__type_by_id(kernel_btf, function_id)->type);
    const btf_param* params = btf_params(proto);
    std::string letters;
    for (unsigned i = 0; i < btf_vlen(proto); ++i) {
        const btf_type* type = btf__type_by_id(kernel_btf, btf__resolve_type(kernel_btf, params[i].type));
        letters += !type                                                 ? '?'
                   : btf_is_ptr(type)                                    ? 'p'
                   : btf_is_int(type) || btf_is_any_enum(type)           ? 'i'
                   : btf_is_struct(type) || btf_is_union(type)           ? 's'
                                                                         : '?';
    }
    return letters;
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
    std::string expected = set == ProgramSet::bpf_lsm ? hook.lsm_params : hook.function_params;
    std::string actual = prototype_of(kernel_btf, id);
    if (actual != expected)
        return function + " takes " + spelled(actual) + " in this kernel; " + hook.program + " is written for " +
               spelled(expected);
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

Selection select_programs(const struct btf* kernel_btf, ProgramSet set, const TrampolineUse& use)
{
    Selection selection;
    std::set<std::string> taken;              // attach functions with a variant chosen
    std::map<std::string, std::string> unfit; // attach function -> why its variants do not fit
    std::map<std::string, std::string> first; // attach function -> its first variant's program
    for (const auto& hook : hooks) {
        if (!in_set(hook, set))
            continue;
        std::string function = attach_function(hook, set);
        first.emplace(function, hook.program);
        if (taken.count(function))
            continue;
        if (hook.only_where_present && btf__find_by_name_kind(kernel_btf, function.c_str(), BTF_KIND_FUNC) < 0) {
            selection.not_needed.insert(hook.program);
            taken.insert(function);
            continue;
        }
        auto why = hook_unavailable(kernel_btf, hook, set);
        if (!why)
            why = trampoline_full(kernel_btf, hook, set, use);
        if (!why) {
            selection.programs.insert(hook.program);
            taken.insert(function);
            continue;
        }
        // A missing function or a full trampoline reads the same for every variant; prototypes differ.
        auto& text = unfit[function];
        if (text.find(*why) == std::string::npos)
            text += (text.empty() ? "" : "; ") + *why;
    }
    for (const auto& [function, why] : unfit)
        if (!taken.count(function))
            selection.left_out[first[function]] = why;
    return selection;
}

RuleKinds covered_kinds(const std::set<std::string>& programs, ProgramSet set, const std::set<std::string>& not_needed)
{
    std::set<std::string> attached; // attach functions with a program among these
    for (const auto& hook : hooks)
        if (in_set(hook, set) && (programs.count(hook.program) || not_needed.count(hook.program)))
            attached.insert(attach_function(hook, set));
    RuleKinds covered = every_kind;
    for (const auto& hook : hooks) {
        if (in_set(hook, set) && !attached.count(attach_function(hook, set)))
            covered &= ~hook.kinds;
    }
    return covered;
}

} // namespace cerberus::bpf
