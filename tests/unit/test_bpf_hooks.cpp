// SPDX-License-Identifier: Apache-2.0
#include "policy/bpf_hooks.hpp"
#include "policy/enforcement.hpp"

#include "cerberus_policy.skel.h"
#include "cerberus_policy_fmod_ret.skel.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace cerberus;
using namespace cerberus::bpf;

namespace {

struct ObjectDeleter {
    void operator()(bpf_object* object) const { bpf_object__close(object); }
};
struct BtfFree {
    void operator()(struct btf* btf) const { btf__free(btf); }
};

// program name -> section name, as built (no kernel involved).
std::map<std::string, std::string> sections_of(const void* bytes, size_t size)
{
    std::unique_ptr<bpf_object, ObjectDeleter> object(bpf_object__open_mem(bytes, size, nullptr));
    REQUIRE(object);
    std::map<std::string, std::string> sections;
    bpf_program* program = nullptr;
    bpf_object__for_each_program(program, object.get())
        sections[bpf_program__name(program)] = bpf_program__section_name(program);
    return sections;
}

// A kernel BTF holding the given functions, each returning int (or nothing) with n int parameters.
struct FakeFunction {
    std::string name;
    unsigned params;
    bool returns_int = true;
};

std::unique_ptr<struct btf, BtfFree> fake_kernel(const std::vector<FakeFunction>& functions)
{
    std::unique_ptr<struct btf, BtfFree> btf(btf__new_empty());
    int int_id = btf__add_int(btf.get(), "int", 4, BTF_INT_SIGNED);
    for (const auto& function : functions) {
        int proto = btf__add_func_proto(btf.get(), function.returns_int ? int_id : 0);
        for (unsigned i = 0; i < function.params; ++i)
            btf__add_func_param(btf.get(), ("arg" + std::to_string(i)).c_str(), int_id);
        btf__add_func(btf.get(), function.name.c_str(), BTF_FUNC_GLOBAL, proto);
    }
    return btf;
}

// Every hook as the 6.1 kernel has it, for both sets.
std::vector<FakeFunction> kernel_6_1()
{
    std::vector<FakeFunction> functions;
    for (const auto& hook : policy_hooks()) {
        if (hook.lsm_hook)
            functions.push_back({attach_function(hook, ProgramSet::bpf_lsm), hook.lsm_params, hook.denies});
        functions.push_back({hook.function, hook.function_params, hook.denies});
    }
    return functions;
}

std::set<std::string> every_program()
{
    std::set<std::string> programs;
    for (const auto& hook : policy_hooks())
        programs.insert(hook.program);
    return programs;
}

} // namespace

TEST_CASE("bpf hooks: the table lists every program of both objects, attached where the object says")
{
    size_t lsm_size = 0;
    size_t fmod_ret_size = 0;
    const void* lsm_bytes = cerberus_policy__elf_bytes(&lsm_size);
    const void* fmod_ret_bytes = cerberus_policy_fmod_ret__elf_bytes(&fmod_ret_size);
    auto lsm = sections_of(lsm_bytes, lsm_size);
    auto fmod_ret = sections_of(fmod_ret_bytes, fmod_ret_size);
    CHECK(lsm.size() == policy_hooks().size());
    CHECK(fmod_ret.size() == policy_hooks().size());
    for (const auto& hook : policy_hooks()) {
        CAPTURE(hook.program);
        CHECK(find_hook(hook.program) == &hook);
        if (!hook.lsm_hook) { // a kernel function traced in both sets
            CHECK_FALSE(hook.denies);
            CHECK(lsm[hook.program] == std::string("fentry/") + hook.function);
            CHECK(fmod_ret[hook.program] == std::string("fentry/") + hook.function);
            CHECK(attach_function(hook, ProgramSet::bpf_lsm) == hook.function);
            continue;
        }
        CHECK(lsm[hook.program] == std::string("lsm/") + hook.lsm_hook);
        CHECK(fmod_ret[hook.program] == std::string(hook.denies ? "fmod_ret/" : "fentry/") + hook.function);
        CHECK(std::string(hook.function).rfind("security_", 0) == 0); // the verifier allows fmod_ret only there
    }
    CHECK(find_hook("cerb_no_such_hook") == nullptr);
}

TEST_CASE("bpf hooks: a kernel with every function as written for can run every hook in both sets")
{
    auto btf = fake_kernel(kernel_6_1());
    for (const auto& hook : policy_hooks()) {
        CAPTURE(hook.program);
        CHECK_FALSE(hook_unavailable(btf.get(), hook, ProgramSet::bpf_lsm));
        CHECK_FALSE(hook_unavailable(btf.get(), hook, ProgramSet::fmod_ret));
    }
}

TEST_CASE("bpf hooks: a missing, reshaped or void function makes its hook unavailable, saying why")
{
    auto functions = kernel_6_1();
    std::erase_if(functions, [](const FakeFunction& f) { return f.name == "security_create_user_ns"; });
    for (auto& function : functions) {
        if (function.name == "security_mmap_file")
            function.params = 4; // as the LSM hook: the program would read flags as its return value
        if (function.name == "security_bpf")
            function.returns_int = false;
        if (function.name == "security_bprm_committed_creds")
            function.returns_int = false; // as in every kernel: fentry needs no return value
    }
    auto btf = fake_kernel(functions);

    auto userns = hook_unavailable(btf.get(), *find_hook("cerb_userns_create"), ProgramSet::fmod_ret);
    REQUIRE(userns);
    CHECK(userns->find("security_create_user_ns is not in the kernel's BTF") != std::string::npos);
    CHECK_FALSE(hook_unavailable(btf.get(), *find_hook("cerb_userns_create"), ProgramSet::bpf_lsm));

    auto mmap = hook_unavailable(btf.get(), *find_hook("cerb_mmap_file"), ProgramSet::fmod_ret);
    REQUIRE(mmap);
    CHECK(mmap->find("takes 4 parameters") != std::string::npos);

    auto bpf = hook_unavailable(btf.get(), *find_hook("cerb_bpf"), ProgramSet::fmod_ret);
    REQUIRE(bpf);
    CHECK(bpf->find("returns nothing") != std::string::npos);
    CHECK_FALSE(hook_unavailable(btf.get(), *find_hook("cerb_bprm_committed_creds"), ProgramSet::fmod_ret));
}

TEST_CASE("bpf hooks: a trampoline holding the most programs the kernel allows is full, each function its own")
{
    auto btf = fake_kernel(kernel_6_1());
    auto id_of = [&](const char* function) {
        int id = btf__find_by_name_kind(btf.get(), function, BTF_KIND_FUNC);
        REQUIRE(id > 0);
        return static_cast<unsigned>(id);
    };
    const Hook& chmod = *find_hook("cerb_path_chmod");
    TrampolineUse use{{id_of("security_path_chmod"), trampoline_capacity - 1}};
    CHECK_FALSE(trampoline_full(btf.get(), chmod, ProgramSet::fmod_ret, use)); // the last slot is ours

    use[id_of("security_path_chmod")] = trampoline_capacity;
    auto full = trampoline_full(btf.get(), chmod, ProgramSet::fmod_ret, use);
    REQUIRE(full);
    CHECK(full->find("security_path_chmod's trampoline already holds 38 programs") != std::string::npos);
    CHECK_FALSE(trampoline_full(btf.get(), *find_hook("cerb_path_chown"), ProgramSet::fmod_ret, use));
    // The BPF LSM program attaches to bpf_lsm_path_chmod: another trampoline.
    CHECK_FALSE(trampoline_full(btf.get(), chmod, ProgramSet::bpf_lsm, use));
    use[id_of("bpf_lsm_path_chmod")] = trampoline_capacity + 1;
    CHECK(trampoline_full(btf.get(), chmod, ProgramSet::bpf_lsm, use));
}

TEST_CASE("bpf hooks: a rule kind is covered only when every hook it needs is there")
{
    using policy::RuleKind;
    auto all = covered_kinds(every_program());
    for (auto kind : policy::all_rule_kinds)
        CHECK((all & kind_bit(kind)) != 0);

    auto without = [&](const char* program) {
        auto programs = every_program();
        programs.erase(program);
        return all & ~covered_kinds(programs); // what is lost
    };
    CHECK(without("cerb_userns_create") == kind_bit(RuleKind::escalation));
    CHECK(without("cerb_capable") == kind_bit(RuleKind::forbidden_caps));
    CHECK(without("cerb_mmap_file") == (kind_bit(RuleKind::allowed_bins) | kind_bit(RuleKind::exec_mappings)));
    CHECK(without("cerb_socket_create") == (kind_bit(RuleKind::allowed_hosts) | kind_bit(RuleKind::raw_sockets)));
    auto path_kinds = kind_bit(RuleKind::paths) | kind_bit(RuleKind::path_changes) | kind_bit(RuleKind::denied_paths) |
                      kind_bit(RuleKind::unix_sockets);
    CHECK(without("cerb_unix_may_send") == path_kinds);
    CHECK(without("cerb_sb_mount") ==
          (path_kinds | kind_bit(RuleKind::allowed_bins) | kind_bit(RuleKind::exec_mappings)));
    CHECK(without("cerb_bprm_committed_creds") == all); // nothing is armed without it
}

TEST_CASE("enforcement: the fmod_ret backend is built, and named as --enforcement takes it")
{
    CHECK(policy::parse_enforcement("fmod-ret") == policy::Enforcement::fmod_ret);
    CHECK(policy::backend(policy::Enforcement::fmod_ret).kind() == policy::Enforcement::fmod_ret);
    CHECK(std::string(policy::enforcement_name(policy::Enforcement::fmod_ret)) == "fmod-ret");
    CHECK_FALSE(policy::parse_enforcement("fmod_ret"));
}
