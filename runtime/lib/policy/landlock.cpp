// SPDX-License-Identifier: Apache-2.0
#include "policy/landlock.hpp"

#include "base/error.hpp"

#include <elf.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

// Rights newer than the build host's kernel headers (Debian 12 ships 6.1's).
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON
#define LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (1U << 1)
#endif
#ifndef LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF
#define LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF (1U << 2)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

namespace cerberus::landlock {
namespace {

constexpr uint64_t read_rights = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
constexpr uint64_t file_rights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                                 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
                                 LANDLOCK_ACCESS_FS_IOCTL_DEV;

uint64_t write_rights(int abi)
{
    uint64_t rights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                      LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                      LANDLOCK_ACCESS_FS_MAKE_SYM;
    if (abi >= 2)
        rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return rights;
}

UniqueFd open_inside(int root_fd, const std::string& path, int flags)
{
    open_how how{};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    std::string relative = path == "/" ? "." : path.substr(1);
    return UniqueFd(static_cast<int>(::syscall(SYS_openat2, root_fd, relative.c_str(), &how, sizeof(how))));
}

// The ELF interpreter (PT_INTERP) of a program, "" for a static one or a script.
std::string interpreter_of(int root_fd, const std::string& path)
{
    UniqueFd fd = open_inside(root_fd, path, O_RDONLY);
    Elf64_Ehdr header{};
    if (!fd || ::pread(fd.get(), &header, sizeof(header), 0) != sizeof(header) ||
        std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64)
        return "";
    for (unsigned i = 0; i < header.e_phnum && i < 64; ++i) {
        Elf64_Phdr program{};
        off_t at = static_cast<off_t>(header.e_phoff + i * sizeof(program));
        if (::pread(fd.get(), &program, sizeof(program), at) != sizeof(program))
            return "";
        if (program.p_type != PT_INTERP || program.p_filesz == 0 || program.p_filesz > 4096)
            continue;
        std::string name(program.p_filesz, '\0');
        if (::pread(fd.get(), name.data(), name.size(), static_cast<off_t>(program.p_offset)) !=
            static_cast<ssize_t>(name.size()))
            return "";
        name.resize(std::strlen(name.c_str()));
        return name.empty() || name[0] != '/' ? "" : name;
    }
    return "";
}

void add_rule(int ruleset_fd, int root_fd, const std::string& path, uint64_t access)
{
    UniqueFd target = open_inside(root_fd, path, O_PATH);
    if (!target) {
        if (errno == ENOENT || errno == ENOTDIR)
            return;
        throw_errno("opening " + path + " for a landlock rule");
    }
    struct stat st {};
    check(::fstat(target.get(), &st), "stat " + path);
    landlock_path_beneath_attr rule{};
    rule.allowed_access = S_ISDIR(st.st_mode) ? access : access & file_rights;
    rule.parent_fd = target.get();
    if (rule.allowed_access == 0)
        return;
    if (::syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        throw_errno("adding the landlock rule for " + path);
}

} // namespace

int abi_version()
{
    long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    return abi < 0 ? 0 : static_cast<int>(abi);
}

RulesetPlan plan_ruleset(const policy::Policy& policy, int abi)
{
    RulesetPlan plan;
    bool bins = policy.allowed_bins.has_value();
    uint64_t exec = bins ? 0 : LANDLOCK_ACCESS_FS_EXECUTE;
    uint64_t all = read_rights | write_rights(abi) | LANDLOCK_ACCESS_FS_EXECUTE;
    if (policy.restricts_paths()) {
        plan.handled = all;
        for (const auto& path : policy.allowed_paths.value_or(std::vector<std::string>{}))
            plan.grants.push_back({path, read_rights | write_rights(abi) | exec});
        for (const auto& path : policy.read_only_paths.value_or(std::vector<std::string>{}))
            plan.grants.push_back({path, read_rights | exec});
    } else if (!policy.denied_paths.empty()) {
        // Denied paths are hidden by mounts; a domain over the whole tree keeps
        // any mount from uncovering them.
        plan.handled = all;
        plan.grants.push_back({"/", all & ~(bins ? LANDLOCK_ACCESS_FS_EXECUTE : 0)});
    } else if (bins) {
        plan.handled = LANDLOCK_ACCESS_FS_EXECUTE;
    }
    if (bins) {
        for (const auto& path : *policy.allowed_bins)
            plan.grants.push_back({path, LANDLOCK_ACCESS_FS_EXECUTE | (plan.handled & LANDLOCK_ACCESS_FS_READ_FILE)});
        plan.grant_interpreters = true;
    }
    return plan;
}

bool confine_to_domain(RulesetPlan& plan, int abi)
{
    if (abi < signal_scope_abi)
        return false;
    plan.scoped |= LANDLOCK_SCOPE_SIGNAL; // a domain of its own even without access rights
    return true;
}

UniqueFd create_ruleset(const RulesetPlan& plan)
{
    // landlock_ruleset_attr as ABI 6 has it; the build host's headers (6.1) stop at the first field.
    struct {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
    } attr{plan.handled, 0, plan.scoped};
    size_t size = plan.scoped ? sizeof(attr) : sizeof(attr.handled_access_fs);
    UniqueFd fd(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0)));
    if (!fd)
        throw_errno("creating a landlock ruleset");
    return fd;
}

void add_rules(int ruleset_fd, const RulesetPlan& plan, int root_fd)
{
    std::vector<std::string> interpreters;
    for (const auto& grant : plan.grants)
        add_rule(ruleset_fd, root_fd, grant.path, grant.access);
    if (!plan.grant_interpreters)
        return;
    for (const auto& grant : plan.grants) {
        if (!(grant.access & LANDLOCK_ACCESS_FS_EXECUTE))
            continue;
        std::string interpreter = interpreter_of(root_fd, grant.path);
        if (!interpreter.empty() && std::find(interpreters.begin(), interpreters.end(), interpreter) == interpreters.end())
            interpreters.push_back(interpreter);
    }
    // The kernel opens a dynamically linked program's loader for exec too.
    for (const auto& interpreter : interpreters)
        add_rule(ruleset_fd, root_fd, interpreter,
                 LANDLOCK_ACCESS_FS_EXECUTE | (plan.handled & LANDLOCK_ACCESS_FS_READ_FILE));
}

void allow_directory(int ruleset_fd, const RulesetPlan& plan, int dir_fd)
{
    landlock_path_beneath_attr rule{};
    rule.allowed_access = plan.handled & ~(plan.grant_interpreters ? LANDLOCK_ACCESS_FS_EXECUTE : 0);
    rule.parent_fd = dir_fd;
    if (rule.allowed_access != 0 &&
        ::syscall(SYS_landlock_add_rule, ruleset_fd, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0)
        throw_errno("adding the landlock rule for the working directory");
}

uint32_t restrict_flags(int abi)
{
    // The agent runs after an exec: its denials are logged only when asked.
    // Domains the agent makes for itself are its own business: not logged.
    return abi >= 7 ? LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON | LANDLOCK_RESTRICT_SELF_LOG_SUBDOMAINS_OFF : 0;
}

} // namespace cerberus::landlock
