// SPDX-License-Identifier: Apache-2.0
// The hooks of the policy programs (bpf/cerberus_policy.bpf.c), as the kernel
// must offer them to each set of programs, and the rule kinds each serves.
// The same programs attach as BPF LSM programs (lsm/<hook>) or as fmod_ret
// programs on the security_ function that calls the hook. Kernels change
// hooks' prototypes, so a hook may have a program per prototype (variants);
// each is checked against the running kernel's BTF before loading, the first
// that fits is loaded, and the rules of a hook none fits are known.
#pragma once

#include "policy/enforcement.hpp"

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

struct btf;

namespace cerberus::bpf {

// The two sets of programs built from one source (cmake/bpf.cmake).
enum class ProgramSet { bpf_lsm, fmod_ret };

// A set of rule kinds.
using RuleKinds = unsigned;
constexpr RuleKinds kind_bit(policy::RuleKind kind)
{
    return 1u << static_cast<unsigned>(kind);
}

struct Hook {
    const char* program;  // name in the BPF object
    const char* lsm_hook; // lsm/<lsm_hook>, checked as bpf_lsm_<lsm_hook>; nullptr: fentry/<function> in both sets
    const char* function; // the security_ function calling the hook: fmod_ret/<function>
    // The parameters the program is written for, without the return value, one letter each
    // (prototype_of): in the BPF LSM set, and in the fmod_ret set; nullptr: not built in that set.
    const char* lsm_params;
    const char* function_params;
    bool denies;     // false: it never refuses (attached as fentry/<function> in the fmod_ret set)
    RuleKinds kinds; // what needs it
    // A kernel without the function sends what it guards through another hook (POSIX ACLs before 6.2):
    // missing there, it is not left out, and the kinds stay covered.
    bool only_where_present = false;
};

// Every program of both objects, in their order; the variants of a hook one after the other.
const std::vector<Hook>& policy_hooks();

// True when the set's object has the program.
bool in_set(const Hook& hook, ProgramSet set);

// The letters of a kernel function's parameters as the programs read them: p a pointer, i an integer
// (enums and bool included), s a struct or union passed by value (kuid_t), ? anything else.
std::string prototype_of(const struct btf* kernel_btf, int function_id);

// The hook of a program, or nullptr.
const Hook* find_hook(const std::string& program);

// The kernel function a set's program attaches to: bpf_lsm_<hook> or security_<...>.
std::string attach_function(const Hook& hook, ProgramSet set);

struct BtfDeleter {
    void operator()(struct btf* btf) const;
};
using KernelBtf = std::unique_ptr<struct btf, BtfDeleter>;

// The running kernel's BTF (/sys/kernel/btf/vmlinux), which every program
// attaches by; throws saying it is missing.
KernelBtf load_kernel_btf();

// Why the kernel whose BTF is given cannot run the hook in this set (the
// function is missing, inlined away, or has other parameters or no return
// value), or nullopt when it can.
std::optional<std::string> hook_unavailable(const struct btf* kernel_btf, const Hook& hook, ProgramSet set);

// How many programs one kernel function's BPF trampoline takes on x86-64
// (BPF_MAX_TRAMP_LINKS): fentry, fexit, fmod_ret and BPF LSM programs, of
// every tool, count together.
constexpr unsigned trampoline_capacity = 38;

// Programs holding a slot of a vmlinux function's trampoline, by the
// function's BTF type id.
using TrampolineUse = std::map<unsigned, unsigned>;

// Every tracing link the kernel lists (BPF LSM links are tracing links too),
// counted by the vmlinux function it attaches to. The loader counts before
// attaching because an attach refused with E2BIG is not harmless: on Debian's
// 6.1 kernel, trying a full trampoline and detaching from it later left other
// programs skipped on a CPU. Throws when the kernel will not list them.
TrampolineUse trampoline_use();

// Why the hook's program cannot join its function's trampoline (every slot
// is taken), or nullopt when it can.
std::optional<std::string> trampoline_full(const struct btf* kernel_btf, const Hook& hook, ProgramSet set,
                                           const TrampolineUse& use);

// What a set's programs are on a kernel: one per hook (the first variant that
// fits the kernel's prototype and whose trampoline has a slot), and, for each
// hook none fits, why, keyed by the first variant's program.
struct Selection {
    std::set<std::string> programs;
    std::map<std::string, std::string> left_out;
    std::set<std::string> not_needed; // only_where_present hooks this kernel does not have
};
Selection select_programs(const struct btf* kernel_btf, ProgramSet set, const TrampolineUse& use);

// The rule kinds of the set that have every hook they need (some variant of
// it) among these programs, the not_needed ones counting as there.
RuleKinds covered_kinds(const std::set<std::string>& programs, ProgramSet set,
                        const std::set<std::string>& not_needed = {});

} // namespace cerberus::bpf
