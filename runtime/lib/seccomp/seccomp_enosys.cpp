// SPDX-License-Identifier: Apache-2.0
#include "seccomp/seccomp_enosys.hpp"

#include <linux/seccomp.h>
#include <seccomp.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <optional>
#include <utility>

namespace cerberus::seccomp {

namespace {

constexpr uint32_t kReturnEnosys = SECCOMP_RET_ERRNO | ENOSYS;
constexpr uint32_t kNrOffset = offsetof(seccomp_data, nr);
constexpr uint32_t kArchOffset = offsetof(seccomp_data, arch);
// __X32_SYSCALL_BIT: x32 calls reach seccomp as AUDIT_ARCH_X86_64 with this
// bit in their number; libseccomp resolves x32 names with it set as well.
constexpr uint32_t kX32SyscallBit = 0x40000000;

// ALLOW and LOG run the call, TRACE hands it to a tracer that answers calls
// it does not know: new calls already get ENOSYS from the kernel or tracer.
bool needs_stub(uint32_t default_action)
{
    return default_action != SCMP_ACT_ALLOW && default_action != SCMP_ACT_LOG &&
           (default_action & SECCOMP_RET_ACTION_FULL) != SCMP_ACT_TRACE(0) &&
           default_action != SCMP_ACT_ERRNO(ENOSYS);
}

// The largest number that a name of the profile (any action) has on arch.
// Negative numbers are libseccomp's stand-ins for calls arch lacks.
std::optional<uint32_t> largest_listed(const spec::Seccomp& config, uint32_t arch)
{
    std::optional<uint32_t> largest;
    for (const auto& rule : config.syscalls)
        for (const auto& name : rule.names) {
            int nr = seccomp_syscall_resolve_name_arch(arch, name.c_str());
            if (nr >= 0)
                largest = std::max(largest.value_or(0), static_cast<uint32_t>(nr));
        }
    return largest;
}

// The limits of one kernel architecture (seccomp_data.arch). x86-64 and x32
// share AUDIT_ARCH_X86_64 with tables of their own, told apart by the x32 bit.
struct ArchLimits {
    uint32_t audit_arch;
    std::optional<uint32_t> largest;     // every ABI but x32
    std::optional<uint32_t> largest_x32; // bit included
};

std::vector<ArchLimits> limits_by_audit_arch(const spec::Seccomp& config, const std::vector<uint32_t>& architectures)
{
    std::vector<ArchLimits> limits;
    for (uint32_t arch : architectures) {
        auto largest = largest_listed(config, arch);
        if (!largest)
            continue;
        // SCMP_ARCH_X32 is libseccomp's own value; the others are the AUDIT_ARCH_ ones.
        const uint32_t audit_arch = arch == SCMP_ARCH_X32 ? SCMP_ARCH_X86_64 : arch;
        auto entry = std::find_if(limits.begin(), limits.end(),
                                  [&](const ArchLimits& known) { return known.audit_arch == audit_arch; });
        if (entry == limits.end())
            entry = limits.insert(limits.end(), ArchLimits{audit_arch, {}, {}});
        (arch == SCMP_ARCH_X32 ? entry->largest_x32 : entry->largest) = largest;
    }
    return limits;
}

// Classic BPF jumps only forward, conditional ones by 8 bits at most: each
// architecture gets a block of a few instructions with its own return of
// ENOSYS, and the jumps out of the stub (32-bit offsets) are set once its
// length is known.
class StubBuilder {
public:
    // The arch tests compare the loaded architecture; the blocks load the
    // number over it, which is harmless: libseccomp's program starts with its
    // own load.
    StubBuilder() { emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArchOffset)); }

    void add(const ArchLimits& arch)
    {
        const size_t arch_test = emit(conditional(BPF_JEQ, arch.audit_arch));
        emit(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNrOffset));
        std::vector<size_t> over_limit;
        auto check = [&](std::optional<uint32_t> largest) {
            if (largest)
                over_limit.push_back(emit(conditional(BPF_JGT, *largest)));
            to_filter_.push_back(emit(BPF_STMT(BPF_JMP | BPF_JA, 0)));
        };
        if (arch.audit_arch == SCMP_ARCH_X86_64) {
            // Without x32 in the filter, x32 calls still go to libseccomp's program.
            const size_t abi_test = emit(conditional(BPF_JSET, kX32SyscallBit));
            check(arch.largest);
            program_[abi_test].jt = skip(abi_test, program_.size());
            check(arch.largest_x32);
        } else {
            check(arch.largest);
        }
        const size_t enosys = emit(BPF_STMT(BPF_RET | BPF_K, kReturnEnosys));
        for (size_t at : over_limit)
            program_[at].jt = skip(at, enosys);
        program_[arch_test].jf = skip(arch_test, program_.size());
    }

    // Empty when no block was added.
    std::vector<sock_filter> finish() &&
    {
        if (to_filter_.empty())
            return {};
        for (size_t at : to_filter_)
            program_[at].k = static_cast<uint32_t>(program_.size() - at - 1);
        return std::move(program_);
    }

private:
    static sock_filter conditional(uint16_t op, uint32_t k) { return BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0); }

    // Blocks are at most eight instructions long, so in-block offsets fit in jt and jf.
    static uint8_t skip(size_t from, size_t to) { return static_cast<uint8_t>(to - from - 1); }

    size_t emit(sock_filter instruction)
    {
        program_.push_back(instruction);
        return program_.size() - 1;
    }

    std::vector<sock_filter> program_;
    std::vector<size_t> to_filter_;
};

} // namespace

std::vector<sock_filter> enosys_stub(const spec::Seccomp& config, uint32_t default_action,
                                     const std::vector<uint32_t>& architectures)
{
    if (!needs_stub(default_action))
        return {};
    StubBuilder stub;
    for (const auto& arch : limits_by_audit_arch(config, architectures))
        stub.add(arch);
    return std::move(stub).finish();
}

} // namespace cerberus::seccomp
