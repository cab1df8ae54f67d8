// SPDX-License-Identifier: Apache-2.0
#include "seccomp/seccomp.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "seccomp/seccomp_enosys.hpp"

#include <linux/seccomp.h>
#include <seccomp.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>

namespace cerberus::seccomp {

namespace {

constexpr std::string_view kField = "linux.seccomp";
constexpr unsigned kMaxArgs = 6;

struct ContextDeleter {
    void operator()(void* ctx) const { seccomp_release(ctx); }
};
using FilterContext = std::unique_ptr<void, ContextDeleter>;

template <typename T>
std::optional<T> lookup(const auto& table, const std::string& name)
{
    for (const auto& [known, value] : table)
        if (known == name)
            return value;
    return std::nullopt;
}

[[noreturn]] void invalid(const std::string& field, const std::string& problem)
{
    throw Error(field + ": " + problem, EINVAL);
}

// Every architecture runtime-spec names that libseccomp 2.5 knows.
constexpr std::array<std::pair<std::string_view, uint32_t>, 19> kArchitectures{{
    {"SCMP_ARCH_X86", SCMP_ARCH_X86},
    {"SCMP_ARCH_X86_64", SCMP_ARCH_X86_64},
    {"SCMP_ARCH_X32", SCMP_ARCH_X32},
    {"SCMP_ARCH_ARM", SCMP_ARCH_ARM},
    {"SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64},
    {"SCMP_ARCH_MIPS", SCMP_ARCH_MIPS},
    {"SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64},
    {"SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32},
    {"SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL},
    {"SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64},
    {"SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32},
    {"SCMP_ARCH_PPC", SCMP_ARCH_PPC},
    {"SCMP_ARCH_PPC64", SCMP_ARCH_PPC64},
    {"SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE},
    {"SCMP_ARCH_S390", SCMP_ARCH_S390},
    {"SCMP_ARCH_S390X", SCMP_ARCH_S390X},
    {"SCMP_ARCH_PARISC", SCMP_ARCH_PARISC},
    {"SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64},
    {"SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64},
}};

constexpr std::array<std::pair<std::string_view, scmp_compare>, 7> kOperators{{
    {"SCMP_CMP_NE", SCMP_CMP_NE},
    {"SCMP_CMP_LT", SCMP_CMP_LT},
    {"SCMP_CMP_LE", SCMP_CMP_LE},
    {"SCMP_CMP_EQ", SCMP_CMP_EQ},
    {"SCMP_CMP_GE", SCMP_CMP_GE},
    {"SCMP_CMP_GT", SCMP_CMP_GT},
    {"SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ},
}};

constexpr std::array<std::pair<std::string_view, unsigned>, 4> kFlags{{
    {"SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC},
    {"SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG},
    {"SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW},
    {"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV},
}};

uint32_t parse_action(const std::string& name, std::optional<uint32_t> errno_ret, const std::string& field)
{
    // ERRNO and TRACE carry 16 bits of data; runc defaults both to EPERM.
    auto data = [&] {
        uint32_t value = errno_ret.value_or(EPERM);
        if (value > 0xffff)
            invalid(field, "errnoRet " + std::to_string(value) + " does not fit in 16 bits");
        return value;
    };
    if (name == "SCMP_ACT_KILL" || name == "SCMP_ACT_KILL_THREAD")
        return SCMP_ACT_KILL_THREAD;
    if (name == "SCMP_ACT_KILL_PROCESS")
        return SCMP_ACT_KILL_PROCESS;
    if (name == "SCMP_ACT_TRAP")
        return SCMP_ACT_TRAP;
    if (name == "SCMP_ACT_ERRNO")
        return SCMP_ACT_ERRNO(data());
    if (name == "SCMP_ACT_TRACE")
        return SCMP_ACT_TRACE(data());
    if (name == "SCMP_ACT_ALLOW")
        return SCMP_ACT_ALLOW;
    if (name == "SCMP_ACT_LOG")
        return SCMP_ACT_LOG;
    if (name == "SCMP_ACT_NOTIFY")
        return SCMP_ACT_NOTIFY;
    invalid(field, "unknown action \"" + name + "\"");
}

// seccomp(2) with a NULL program fails with EFAULT when the flags are known
// and EINVAL when they are not (the probe libseccomp uses as well).
bool kernel_supports_flag(unsigned flag)
{
    if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
        flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER; // only valid together
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, nullptr) < 0 && errno == EFAULT;
}

unsigned parse_flags(const std::vector<std::string>& names)
{
    unsigned flags = 0;
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string field = std::string(kField) + ".flags[" + std::to_string(i) + "]";
        auto flag = lookup<unsigned>(kFlags, names[i]);
        if (!flag)
            invalid(field, "unknown flag \"" + names[i] + "\"");
        if (!kernel_supports_flag(*flag))
            invalid(field, names[i] + " is not supported by this kernel");
        flags |= *flag;
    }
    return flags;
}

std::vector<scmp_arg_cmp> parse_args(const std::vector<spec::SeccompArg>& args, const std::string& field)
{
    std::vector<scmp_arg_cmp> conditions;
    for (size_t i = 0; i < args.size(); ++i) {
        const auto& arg = args[i];
        const std::string arg_field = field + ".args[" + std::to_string(i) + "]";
        if (arg.index >= kMaxArgs)
            invalid(arg_field + ".index", "index " + std::to_string(arg.index) + " is out of range (0-5)");
        auto op = lookup<scmp_compare>(kOperators, arg.op);
        if (!op)
            invalid(arg_field + ".op", "unknown operator \"" + arg.op + "\"");
        // For SCMP_CMP_MASKED_EQ value is the mask and valueTwo the datum, as in libseccomp.
        conditions.push_back(scmp_arg_cmp{arg.index, *op, arg.value, arg.value_two});
    }
    return conditions;
}

bool repeats_an_index(const std::vector<scmp_arg_cmp>& conditions)
{
    std::array<unsigned, kMaxArgs> uses{};
    for (const auto& condition : conditions)
        if (++uses[condition.arg] > 1)
            return true;
    return false;
}

void add_rule(scmp_filter_ctx ctx, uint32_t action, int nr, const std::vector<scmp_arg_cmp>& conditions,
              const std::string& what)
{
    int rc = seccomp_rule_add_array(ctx, action, nr, static_cast<unsigned>(conditions.size()), conditions.data());
    if (rc < 0)
        throw_errno(what, -rc);
}

// Returns whether a rule was added with the SCMP_ACT_NOTIFY action.
bool add_syscall_rules(scmp_filter_ctx ctx, const spec::SeccompSyscall& rule, uint32_t default_action,
                       const std::string& field)
{
    uint32_t action = parse_action(rule.action, rule.errno_ret, field + ".action");
    auto conditions = parse_args(rule.args, field);
    // libseccomp refuses rules that repeat the default action; they are no-ops anyway.
    if (action == default_action)
        return false;
    bool added = false;
    for (const auto& name : rule.names) {
        if (action == SCMP_ACT_NOTIFY && name == "write")
            invalid(field, "SCMP_ACT_NOTIFY cannot be used for the write syscall: " // runc's words
                           "the runtime writes after installing the filter");
        int nr = seccomp_syscall_resolve_name(name.c_str());
        if (nr == __NR_SCMP_ERROR) {
            spdlog::debug("{}: unknown syscall \"{}\" ignored", field, name);
            continue;
        }
        const std::string what = field + ": adding rule for syscall \"" + name + "\"";
        // libseccomp rejects one rule comparing the same argument twice; runc
        // then adds each comparison as its own rule, and so do we.
        if (repeats_an_index(conditions)) {
            for (const auto& condition : conditions)
                add_rule(ctx, action, nr, {condition}, what);
        } else {
            add_rule(ctx, action, nr, conditions, what);
        }
        added = true;
    }
    return added && action == SCMP_ACT_NOTIFY;
}

std::vector<sock_filter> export_program(scmp_filter_ctx ctx)
{
    // libseccomp 2.5 exports only to an fd.
    UniqueFd memfd(static_cast<int>(check(memfd_create("cerberus-seccomp", MFD_CLOEXEC), "memfd_create")));
    int rc = seccomp_export_bpf(ctx, memfd.get());
    if (rc < 0)
        throw_errno("seccomp_export_bpf", -rc);
    struct stat st {};
    check(fstat(memfd.get(), &st), "fstat seccomp program");
    if (st.st_size % sizeof(sock_filter) != 0)
        throw Error("seccomp_export_bpf: program size " + std::to_string(st.st_size) + " is not whole instructions",
                    EINVAL);
    std::vector<sock_filter> program(st.st_size / sizeof(sock_filter));
    const size_t bytes = program.size() * sizeof(sock_filter);
    if (static_cast<size_t>(check(pread(memfd.get(), program.data(), bytes, 0), "reading seccomp program")) != bytes)
        throw Error("reading seccomp program: short read", EIO);
    return program;
}

} // namespace

bool CompiledSeccomp::has_listener() const
{
    return (flags & SECCOMP_FILTER_FLAG_NEW_LISTENER) != 0;
}

CompiledSeccomp compile(const spec::Seccomp& config)
{
    const std::string default_field = std::string(kField) + ".defaultAction";
    uint32_t default_action = parse_action(config.default_action, config.default_errno_ret, default_field);
    if (default_action == SCMP_ACT_NOTIFY)
        invalid(default_field, "SCMP_ACT_NOTIFY cannot be the default action");

    FilterContext ctx(seccomp_init(default_action));
    if (!ctx)
        invalid(default_field, "libseccomp refused action \"" + config.default_action + "\"");

    std::vector<uint32_t> architectures{seccomp_arch_native()};
    for (size_t i = 0; i < config.architectures.size(); ++i) {
        const std::string field = std::string(kField) + ".architectures[" + std::to_string(i) + "]";
        auto arch = lookup<uint32_t>(kArchitectures, config.architectures[i]);
        if (!arch)
            invalid(field, "unknown architecture \"" + config.architectures[i] + "\"");
        int rc = seccomp_arch_add(ctx.get(), *arch);
        if (rc == -EDOM)
            invalid(field, config.architectures[i] + " has another byte order than this machine");
        if (rc < 0 && rc != -EEXIST) // the native architecture is always present
            throw_errno(field + ": adding architecture " + config.architectures[i], -rc);
        if (rc == 0)
            architectures.push_back(*arch);
    }

    CompiledSeccomp compiled;
    compiled.flags = parse_flags(config.flags);

    bool notify = false;
    for (size_t i = 0; i < config.syscalls.size(); ++i) {
        const std::string field = std::string(kField) + ".syscalls[" + std::to_string(i) + "]";
        notify |= add_syscall_rules(ctx.get(), config.syscalls[i], default_action, field);
    }
    if (notify) {
        if (config.listener_path.empty())
            invalid(std::string(kField) + ".listenerPath", "required by rules with SCMP_ACT_NOTIFY");
        // The kernel refuses TSYNC with NEW_LISTENER; init is single-threaded, so TSYNC is moot.
        compiled.flags = (compiled.flags & ~SECCOMP_FILTER_FLAG_TSYNC) | SECCOMP_FILTER_FLAG_NEW_LISTENER;
    } else if (compiled.flags & SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV) {
        invalid(std::string(kField) + ".flags",
                "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV needs a rule with SCMP_ACT_NOTIFY");
    }

    compiled.program = enosys_stub(config, default_action, architectures);
    auto program = export_program(ctx.get());
    compiled.program.insert(compiled.program.end(), program.begin(), program.end());
    if (compiled.program.size() > BPF_MAXINSNS)
        invalid(std::string(kField), "the filter has " + std::to_string(compiled.program.size()) +
                                         " instructions, more than the kernel's limit of " +
                                         std::to_string(BPF_MAXINSNS));
    return compiled;
}

int install(const CompiledSeccomp& filter)
{
    sock_fprog prog{static_cast<unsigned short>(filter.program.size()),
                    const_cast<sock_filter*>(filter.program.data())};
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, filter.flags, &prog);
    if (fd < 0)
        throw_errno("seccomp(SECCOMP_SET_MODE_FILTER)");
    return filter.has_listener() ? static_cast<int>(fd) : -1;
}

} // namespace cerberus::seccomp
