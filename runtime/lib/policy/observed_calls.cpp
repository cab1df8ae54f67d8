// SPDX-License-Identifier: Apache-2.0
#include "policy/observed_calls.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "cerberus_calls.h"
#include "policy/policy_check.hpp"
#include "policy/rule_lists.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace cerberus::policy {
namespace {

enum CallNumber : uint32_t {
#define CERB_CALL_NUMBER(name, number, d0, p0, d1, p1) nr_##name = number,
    CERB_CALLS(CERB_CALL_NUMBER)
#undef CERB_CALL_NUMBER
};

// Families a socket may have under allowed_hosts (backend_landlock's seccomp rules).
bool family_allowed(uint64_t family)
{
    return family == AF_UNIX || family == AF_INET || family == AF_INET6 || family == AF_NETLINK;
}

// The options that route packets elsewhere ({level, optname}), as backend_landlock refuses them.
bool rerouting_option(uint64_t level, uint64_t optname)
{
    constexpr std::pair<uint64_t, uint64_t> options[] = {{0, 4}, {0, 6}, {41, 57}, {41, 5}, {41, 6}};
    return std::find(std::begin(options), std::end(options), std::pair{level, optname}) != std::end(options);
}

// "/a/./b/../c" -> "/a/c": what the path names when no link is followed.
std::string clean(const std::string& path)
{
    std::vector<std::string> parts;
    for (size_t at = 0; at <= path.size();) {
        size_t end = std::min(path.find('/', at), path.size());
        std::string part = path.substr(at, end - at);
        if (part == "..") {
            if (!parts.empty())
                parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.push_back(part);
        }
        at = end + 1;
    }
    std::string out;
    for (const auto& part : parts)
        out += "/" + part;
    return out.empty() ? "/" : out;
}

std::string text_of(const char (&field)[CERB_CALL_NAME])
{
    return std::string(field, strnlen(field, sizeof(field)));
}

// What the fd resolves to, as the container sees it (the fd is in its mount namespace).
std::optional<std::string> path_of_fd(int fd)
{
    char buf[4096];
    ssize_t n = readlink(("/proc/self/fd/" + std::to_string(fd)).c_str(), buf, sizeof(buf));
    if (n <= 0)
        return std::nullopt;
    return std::string(buf, static_cast<size_t>(n));
}

// The root's own name is "/" when it is another mount namespace's (a container's), else its
// path here (a chroot), which the names found under it start with.
std::optional<std::string> open_inside(int root_fd, const std::string& path, bool follow_last)
{
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    std::string relative = path == "/" ? "." : path.substr(1);
    UniqueFd fd(static_cast<int>(syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof(how))));
    if (!fd)
        return std::nullopt;
    auto found = path_of_fd(fd.get());
    auto root = path_of_fd(root_fd);
    if (!found || !root || *root == "/")
        return found;
    if (*found == *root)
        return "/";
    if (found->rfind(*root + "/", 0) == 0)
        return found->substr(root->size());
    return found;
}

struct Judgement {
    uint16_t op;
    std::string target; // a path; empty for a call that names none
    std::string rule;   // in the trail's words
    bool write = false;
    uint32_t number = 0;
    uint16_t family = 0;
};

// The trail's words for a rule, as the BPF programs' enum and the length of the entry.
bool set_rule(cerb_event& e, const std::string& rule)
{
    for (const auto& list : rule_lists()) {
        bool by_entry = list.denial == DenialWording::by_entry;
        std::string words = list.denial_rule(); // by entry: the list's name and a space, then the entry
        if (by_entry ? rule.rfind(words, 0) != 0 : rule != words)
            continue;
        e.rule = list.trail_rule;
        e.rule_len = by_entry ? static_cast<uint16_t>(rule.size() - words.size()) : 0;
        return true;
    }
    struct Known {
        const char* text;
        uint16_t rule;
    };
    constexpr Known known[] = {
        {"executable mapping not in allowed_bins or read_only_paths", CERB_RULE_EXEC_MAPPING},
        {"escalation is shut under a policy", CERB_RULE_ESCALATION},
        {"address family not allowed", CERB_RULE_ADDRESS_FAMILY},
        {"path could not be resolved", CERB_RULE_PATH_UNRESOLVED},
        {"xattrs are refused under path rules", CERB_RULE_XATTR},
        {"io_uring is refused under host or path rules", CERB_RULE_IO_URING},
        {"memfds are refused under allowed_bins", CERB_RULE_MEMFD},
    };
    for (const auto& k : known) {
        if (rule != k.text)
            continue;
        e.rule = k.rule;
        e.rule_len = 0;
        return true;
    }
    return false;
}

class Judge {
public:
    Judge(const Policy& policy, const cerb_call_event& call, int root_fd)
        : policy_(policy), call_(call), root_fd_(root_fd)
    {
    }

    std::optional<Judgement> judge() const;

private:
    ResolvedName name(int i, bool follow_last) const
    {
        return resolve_name(root_fd_, call_.names[i], follow_last, static_cast<pid_t>(call_.pid));
    }
    std::optional<Judgement> on_path(uint16_t op, const ResolvedName& name, bool write) const;
    std::optional<Judgement> open(uint64_t flags) const;
    std::optional<Judgement> exec() const;
    std::optional<Judgement> refused(uint16_t op, const std::string& rule, uint32_t number = 0) const;
    std::optional<Judgement> escalation(uint16_t op, uint32_t number = 0) const
    {
        return refused(op, "escalation is shut under a policy", number);
    }
    bool path_rules() const { return policy_.restricts_paths() || !policy_.denied_paths.empty(); }
    bool truncated() const { return call_.flags & CERB_CALL_TRUNCATED; }

    const Policy& policy_;
    const cerb_call_event& call_;
    int root_fd_;
};

// The rule that refuses op on the name, if any (a name that did not fit is refused as unresolved).
std::optional<Judgement> Judge::on_path(uint16_t op, const ResolvedName& name, bool write) const
{
    Judgement j{op, name.path, "", write};
    if (truncated()) {
        j.rule = "path could not be resolved";
        return j;
    }
    Action action{.op = "", .target = name.path, .write = write, .rule = ""};
    switch (op) {
    case CERB_OP_EXEC: action.op = "exec"; break;
    case CERB_OP_MMAP_EXEC: action.op = "mmap_exec"; break;
    case CERB_OP_OPEN: action.op = "open"; break;
    default: action.op = "change"; action.write = true; break;
    }
    auto rule = denying_rule(policy_, action);
    if (!rule)
        return std::nullopt;
    j.rule = *rule;
    return j;
}

std::optional<Judgement> Judge::open(uint64_t flags) const
{
    if (flags & O_PATH)
        return std::nullopt; // an O_PATH open asks for no access: nothing of the policy's refused it
    bool creates = flags & O_CREAT;
    ResolvedName target = name(0, !(flags & O_NOFOLLOW) && !(creates && (flags & O_EXCL)));
    bool created = creates && !target.exists;
    bool write = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC) || created;
    return on_path(created ? CERB_OP_CREATE : CERB_OP_OPEN, target, write);
}

// A program that may not run: not in allowed_bins, or outside every path that may be read.
std::optional<Judgement> Judge::exec() const
{
    ResolvedName target = name(0, true);
    if (auto j = on_path(CERB_OP_EXEC, target, false))
        return j;
    auto j = on_path(CERB_OP_OPEN, target, false);
    if (j)
        j->op = CERB_OP_EXEC;
    return j;
}

std::optional<Judgement> Judge::refused(uint16_t op, const std::string& rule, uint32_t number) const
{
    Action action{.op = "", .target = "", .write = false, .rule = rule};
    if (op == CERB_OP_MOUNT)
        action.op = "mount";
    if (!denying_rule(policy_, action))
        return std::nullopt;
    return Judgement{op, "", rule, false, number};
}

std::optional<Judgement> Judge::judge() const
{
    const __u64* a = call_.args;
    uint64_t at_flags = 0;
    switch (call_.nr) {
    case nr_open: return open(a[1]);
    case nr_creat: return open(O_CREAT | O_WRONLY | O_TRUNC);
    case nr_openat:
    case nr_openat2: return open(a[2]);
    case nr_execve:
    case nr_execveat: return exec();
    case nr_mkdir:
    case nr_mkdirat:
    case nr_mknod:
    case nr_mknodat:
    case nr_symlink:
    case nr_symlinkat: return on_path(CERB_OP_CREATE, name(0, false), true);
    case nr_rmdir:
    case nr_unlink:
    case nr_unlinkat: return on_path(CERB_OP_UNLINK, name(0, false), true);
    case nr_rename:
    case nr_renameat:
    case nr_renameat2:
    case nr_link:
    case nr_linkat: {
        uint16_t op = call_.nr == nr_link || call_.nr == nr_linkat ? CERB_OP_LINK : CERB_OP_RENAME;
        if (auto j = on_path(op, name(0, false), true))
            return j;
        return on_path(op, name(1, false), true);
    }
    case nr_fchownat: at_flags = a[4]; [[fallthrough]];
    case nr_utimensat:
    case nr_fchmodat2:
        if (call_.nr != nr_fchownat)
            at_flags = a[3];
        return on_path(CERB_OP_SETATTR, name(0, !(at_flags & AT_SYMLINK_NOFOLLOW)), true);
    case nr_truncate:
    case nr_ftruncate:
    case nr_chmod:
    case nr_fchmod:
    case nr_fchmodat:
    case nr_chown:
    case nr_fchown:
    case nr_utime:
    case nr_utimes:
    case nr_futimesat: return on_path(CERB_OP_SETATTR, name(0, true), true);
    case nr_lchown: return on_path(CERB_OP_SETATTR, name(0, false), true);
    case nr_setxattr:
    case nr_lsetxattr:
    case nr_fsetxattr:
    case nr_removexattr:
    case nr_lremovexattr:
    case nr_fremovexattr:
    case nr_setxattrat:
    case nr_removexattrat: {
        bool follow = call_.nr != nr_lsetxattr && call_.nr != nr_lremovexattr;
        ResolvedName target = name(0, follow);
        if (auto j = on_path(CERB_OP_XATTR, target, true))
            return j;
        if (!path_rules())
            return std::nullopt;
        return Judgement{CERB_OP_XATTR, target.path, "xattrs are refused under path rules", true};
    }
    case nr_ioctl:
        if (call_.err != 0 && call_.err != EACCES)
            return std::nullopt; // drivers answer EPERM for their own reasons; Landlock's is EACCES
        return on_path(CERB_OP_IOCTL, name(0, true), true);
    case nr_mmap:
        if (!(a[2] & PROT_EXEC) || static_cast<int>(a[4]) < 0)
            return std::nullopt;
        return on_path(CERB_OP_MMAP_EXEC, name(0, true), false);
    case nr_mount:
    case nr_umount2:
    case nr_pivot_root:
    case nr_move_mount:
    case nr_fsopen:
    case nr_fsmount:
    case nr_open_tree: return escalation(CERB_OP_MOUNT);
    case nr_bpf: return escalation(CERB_OP_BPF, static_cast<uint32_t>(a[0]));
    case nr_perf_event_open: return escalation(CERB_OP_PERF_EVENT);
    case nr_init_module:
    case nr_finit_module:
    case nr_delete_module: return escalation(CERB_OP_MODULE);
    case nr_kexec_load:
    case nr_kexec_file_load: return escalation(CERB_OP_KEXEC);
    case nr_unshare:
    case nr_clone:
        return a[0] & CLONE_NEWUSER ? escalation(CERB_OP_USERNS) : std::nullopt;
    case nr_setns: return a[1] == CLONE_NEWUSER ? escalation(CERB_OP_USERNS) : std::nullopt;
    case nr_socket: {
        if (!policy_.allowed_hosts || family_allowed(a[0]))
            return std::nullopt; // raw and other inet sockets: the cgroup sock_create program reports them
        auto j = refused(CERB_OP_SOCKET, "address family not allowed", static_cast<uint32_t>(a[1]));
        if (j)
            j->family = static_cast<uint16_t>(a[0]);
        return j;
    }
    case nr_setsockopt:
        if (!policy_.allowed_hosts || !rerouting_option(a[1], a[2]))
            return std::nullopt;
        return Judgement{CERB_OP_SETSOCKOPT, "", "rerouted", false, static_cast<uint32_t>(a[1] << 16 | a[2])};
    case nr_io_uring_setup: return refused(CERB_OP_IO_URING, "io_uring is refused under host or path rules");
    case nr_memfd_create: return refused(CERB_OP_MEMFD, "memfds are refused under allowed_bins");
    }
    return std::nullopt;
}

} // namespace

// A name under the task's own /proc/self (or thread-self) goes through magic
// links (its exe, its fds): resolved from here through /proc/<pid>, whose
// links lead where the task's do.
std::optional<ResolvedName> through_own_proc(pid_t pid, const std::string& full, bool follow_last)
{
    for (std::string own : {"/proc/self", "/proc/thread-self"}) {
        if (pid <= 0 || (full != own && full.rfind(own + "/", 0) != 0))
            continue;
        std::string here = "/proc/" + std::to_string(pid) + full.substr(own.size());
        UniqueFd fd(open(here.c_str(), O_PATH | O_CLOEXEC | (follow_last ? 0 : O_NOFOLLOW)));
        auto found = fd ? path_of_fd(fd.get()) : std::nullopt;
        if (found)
            return ResolvedName{*found, true, true};
    }
    return std::nullopt;
}

ResolvedName resolve_name(int root_fd, const cerb_call_name& name, bool follow_last, pid_t pid)
{
    std::string path = text_of(name.path), dir = text_of(name.dir);
    std::string full = !path.empty() && path[0] == '/' ? path : path.empty() ? dir : (dir.empty() ? "/" : dir) + "/" + path;
    full = clean(full.empty() ? "/" : full);
    if (auto own = through_own_proc(pid, full, follow_last))
        return *own;
    if (root_fd < 0)
        return {full, true, false};
    if (auto found = open_inside(root_fd, full, follow_last))
        return {*found, true, true};
    if (errno != ENOENT || full == "/")
        return {full, true, false};
    // The last component does not exist: its directory does, or the call made nothing.
    size_t slash = full.rfind('/');
    std::string parent = slash == 0 ? "/" : full.substr(0, slash);
    std::string last = full.substr(slash + 1);
    if (auto found = open_inside(root_fd, parent, true))
        return {clean(*found + "/" + last), false, true};
    return {full, false, false};
}

std::optional<cerb_event> judge_call(const Policy& policy, const cerb_call_event& call, int root_fd, uint8_t verdict)
{
    cerb_event e{};
    e.time_ns = call.time_ns;
    e.cgroup_id = call.cgroup_id;
    e.pid = call.pid;
    e.tid = call.tid;
    e.uid = call.uid;
    e.gid = call.gid;
    std::memcpy(e.comm, call.comm, sizeof(e.comm));
    e.verdict = verdict;
    if (call.flags & CERB_CALL_CAPABILITY) {
        e.op = CERB_OP_CAPABILITY;
        e.rule = CERB_RULE_FORBIDDEN_CAP;
        e.target_kind = CERB_TARGET_CAPABILITY;
        e.number = call.cap;
        e.err = EPERM;
        return e;
    }
    auto judged = Judge(policy, call, root_fd).judge();
    if (!judged)
        return std::nullopt;
    e.op = judged->op;
    if (judged->rule == "rerouted")
        e.rule = CERB_RULE_REROUTED;
    else if (!set_rule(e, judged->rule))
        return std::nullopt;
    bool seccomp = judged->target.empty() || e.rule == CERB_RULE_XATTR;
    e.err = call.err ? call.err : seccomp ? EPERM : EACCES;
    e.number = judged->number;
    e.family = judged->family;
    if (!judged->target.empty()) {
        e.target_kind = CERB_TARGET_PATH;
        size_t n = std::min(judged->target.size(), sizeof(e.path) - 1);
        std::memcpy(e.path, judged->target.data(), n);
        e.path_len = static_cast<uint32_t>(n);
        if (e.op == CERB_OP_OPEN && judged->write)
            e.number = CERB_ACCESS_WRITE;
    } else if (e.op == CERB_OP_SOCKET) {
        e.target_kind = CERB_TARGET_NUMBER;
    } else if (e.op == CERB_OP_BPF || e.op == CERB_OP_SETSOCKOPT) {
        e.target_kind = CERB_TARGET_NUMBER;
    }
    return e;
}

std::optional<cerb_event> CallJudge::operator()(const cerb_call_event& call, const nlohmann::json& document,
                                               int root_fd, uint8_t verdict)
{
    std::string text = document.dump();
    auto it = parsed_.find(text);
    if (it == parsed_.end()) {
        if (parsed_.size() >= 1024) // policies of containers long gone
            parsed_.clear();
        try {
            it = parsed_.emplace(text, parse_policy(text)).first;
        } catch (const Error&) {
            return std::nullopt; // the registry's own document: never seen refused
        }
    }
    return judge_call(it->second, call, root_fd, verdict);
}

} // namespace cerberus::policy
