// SPDX-License-Identifier: Apache-2.0
#include "policy/bpf_hooks.hpp"
#include "policy/enforcement.hpp"

#include "cerberus_policy.skel.h"
#include "cerberus_policy_fmod_ret.skel.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
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

// A kernel BTF holding the given functions, each returning int (or nothing), with parameters as
// prototype_of spells them: p a pointer (to a const int, through a typedef), i an int (or a bool), s a
// struct by value.
struct FakeFunction {
    std::string name;
    std::string params;
    bool returns_int = true;
};

std::unique_ptr<struct btf, BtfFree> fake_kernel(const std::vector<FakeFunction>& functions)
{
    std::unique_ptr<struct btf, BtfFree> btf(btf__new_empty());
    int int_id = btf__add_int(btf.get(), "int", 4, BTF_INT_SIGNED);
    int bool_id = btf__add_int(btf.get(), "_Bool", 1, BTF_INT_BOOL);
    int const_id = btf__add_const(btf.get(), int_id);
    int pointer_id = btf__add_ptr(btf.get(), const_id);
    int typedef_id = btf__add_typedef(btf.get(), "int_pointer", pointer_id);
    int struct_id = btf__add_struct(btf.get(), "kuid", 4);
    btf__add_field(btf.get(), "val", int_id, 0, 0);
    int kuid_id = btf__add_typedef(btf.get(), "kuid_t", struct_id);
    for (const auto& function : functions) {
        int proto = btf__add_func_proto(btf.get(), function.returns_int ? int_id : 0);
        for (size_t i = 0; i < function.params.size(); ++i) {
            char letter = function.params[i];
            int type = letter == 'p' ? typedef_id : letter == 's' ? kuid_id : i % 2 ? bool_id : int_id;
            btf__add_func_param(btf.get(), ("arg" + std::to_string(i)).c_str(), type);
        }
        btf__add_func(btf.get(), function.name.c_str(), BTF_FUNC_GLOBAL, proto);
    }
    return btf;
}

// Every hook as its first variant is written for, in both sets (Linux 6.1's prototypes).
std::vector<FakeFunction> kernel_6_1()
{
    std::vector<FakeFunction> functions;
    std::set<std::string> seen;
    for (const auto& hook : policy_hooks()) {
        for (auto set : {ProgramSet::bpf_lsm, ProgramSet::fmod_ret}) {
            std::string function = attach_function(hook, set);
            if (in_set(hook, set) && seen.insert(function).second)
                functions.push_back({function, set == ProgramSet::bpf_lsm ? hook.lsm_params : hook.function_params,
                                     hook.denies});
        }
    }
    return functions;
}

// The same with some functions' prototypes changed.
std::vector<FakeFunction> kernel_with(const std::map<std::string, std::string>& changed)
{
    auto functions = kernel_6_1();
    for (auto& function : functions)
        if (auto found = changed.find(function.name); found != changed.end())
            function.params = found->second;
    return functions;
}

std::set<std::string> every_program(ProgramSet set)
{
    std::set<std::string> programs;
    for (const auto& hook : policy_hooks())
        if (in_set(hook, set))
            programs.insert(hook.program);
    return programs;
}

size_t programs_in(ProgramSet set)
{
    return every_program(set).size();
}

// Kernel functions the set attaches to.
size_t hooks_in(ProgramSet set)
{
    std::set<std::string> functions;
    for (const auto& hook : policy_hooks())
        if (in_set(hook, set))
            functions.insert(attach_function(hook, set));
    return functions.size();
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
    CHECK(lsm.size() == programs_in(ProgramSet::bpf_lsm));
    CHECK(fmod_ret.size() == programs_in(ProgramSet::fmod_ret));
    for (const auto& hook : policy_hooks()) {
        CAPTURE(hook.program);
        CHECK(find_hook(hook.program) == &hook);
        CHECK(lsm.count(hook.program) == in_set(hook, ProgramSet::bpf_lsm));
        CHECK(fmod_ret.count(hook.program) == in_set(hook, ProgramSet::fmod_ret));
        if (!in_set(hook, ProgramSet::fmod_ret)) { // an LSM-only variant: security_ has one prototype
            CHECK(lsm[hook.program] == std::string("lsm/") + hook.lsm_hook);
            continue;
        }
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

TEST_CASE("bpf hooks: a kernel with every function as first written for runs the first variant of every hook")
{
    auto btf = fake_kernel(kernel_6_1());
    for (auto set : {ProgramSet::bpf_lsm, ProgramSet::fmod_ret}) {
        auto selection = select_programs(btf.get(), set, {});
        CHECK(selection.left_out.empty());
        CHECK(covered_kinds(selection.programs, set) == covered_kinds(every_program(set), set));
        for (const auto& hook : policy_hooks()) {
            CAPTURE(hook.program);
            if (!in_set(hook, set))
                continue;
            bool first_variant = &hook == &policy_hooks().front() ||
                                 attach_function(*(&hook - 1), set) != attach_function(hook, set) ||
                                 !in_set(*(&hook - 1), set);
            CHECK(selection.programs.count(hook.program) == first_variant);
            CHECK(hook_unavailable(btf.get(), hook, set).has_value() == !first_variant);
        }
    }
}

TEST_CASE("bpf hooks: newer kernels' prototypes get their own variants, one per hook, every rule kind kept")
{
    // As Linux 6.12 through 7.2 have them: perf_event_open without the attribute, the inode_setattr LSM hook
    // with the idmap (security_inode_setattr had it already), bpf with the kernel flag (6.14).
    auto btf = fake_kernel(kernel_with({{"bpf_lsm_perf_event_open", "i"},
                                        {"security_perf_event_open", "i"},
                                        {"bpf_lsm_inode_setattr", "ppp"},
                                        {"bpf_lsm_bpf", "ipii"},
                                        {"security_bpf", "ipii"}}));
    auto lsm = select_programs(btf.get(), ProgramSet::bpf_lsm, {});
    CHECK(lsm.left_out.empty());
    for (const char* program : {"cerb_perf_event_open_type", "cerb_inode_setattr", "cerb_bpf_from_kernel"}) {
        CAPTURE(program);
        CHECK(lsm.programs.count(program) == 1);
    }
    for (const char* program : {"cerb_perf_event_open", "cerb_inode_setattr_no_idmap", "cerb_bpf"}) {
        CAPTURE(program);
        CHECK(lsm.programs.count(program) == 0);
    }
    auto fmod_ret = select_programs(btf.get(), ProgramSet::fmod_ret, {});
    CHECK(fmod_ret.left_out.empty());
    CHECK(fmod_ret.programs.count("cerb_bpf_from_kernel") == 1);
    CHECK(fmod_ret.programs.count("cerb_inode_setattr") == 1);
    for (auto set : {ProgramSet::bpf_lsm, ProgramSet::fmod_ret}) {
        auto selection = select_programs(btf.get(), set, {});
        CHECK(covered_kinds(selection.programs, set) == covered_kinds(every_program(set), set));
        CHECK(selection.programs.size() == hooks_in(set)); // one program per kernel function
    }
}

TEST_CASE("bpf hooks: every hook has a program for each kernel the lane boots, and this host's")
{
    // tests/unit/data/hook_prototypes.txt: scripts/hook-prototypes.py over the BTF of Debian's 6.1, 6.12 and
    // 7.2 and of the development host's 6.18.
    std::ifstream file(std::string(CERBERUS_SOURCE_DIR) + "/tests/unit/data/hook_prototypes.txt");
    REQUIRE(file);
    std::map<std::string, std::vector<FakeFunction>> kernels;
    std::string line;
    while (std::getline(file, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        std::istringstream fields(line);
        std::string kernel, name, params, returns;
        fields >> kernel >> name >> params >> returns;
        kernels[kernel].push_back({name, params == "-" ? "" : params, returns == "int"});
    }
    CHECK(kernels.size() == 4);
    for (const auto& [kernel, functions] : kernels) {
        auto btf = fake_kernel(functions);
        for (auto set : {ProgramSet::bpf_lsm, ProgramSet::fmod_ret}) {
            CAPTURE(kernel);
            CAPTURE(static_cast<int>(set));
            auto selection = select_programs(btf.get(), set, {});
            for (const auto& [program, why] : selection.left_out)
                FAIL_CHECK(program << ": " << why);
            CHECK(selection.programs.size() + selection.not_needed.size() == hooks_in(set));
            CHECK(covered_kinds(selection.programs, set, selection.not_needed) ==
                  covered_kinds(every_program(set), set));
            // 6.1 sends POSIX ACLs through the xattr hooks; the others have hooks of their own for them.
            std::set<std::string> acl_hooks{"cerb_inode_set_acl", "cerb_inode_remove_acl"};
            CHECK(selection.not_needed == (kernel == "6.1" ? acl_hooks : std::set<std::string>{}));
        }
    }
}

TEST_CASE("bpf hooks: a prototype no variant is written for leaves the hook out, naming both")
{
    auto btf = fake_kernel(kernel_with({{"security_bpf", "ipiip"}, {"security_perf_event_open", "p"}}));
    auto selection = select_programs(btf.get(), ProgramSet::fmod_ret, {});
    CHECK(selection.programs.count("cerb_bpf") == 0);
    CHECK(selection.programs.count("cerb_bpf_from_kernel") == 0);
    REQUIRE(selection.left_out.count("cerb_bpf") == 1);
    CHECK(selection.left_out.count("cerb_bpf_from_kernel") == 0); // keyed by the hook's first variant
    const std::string& why = selection.left_out["cerb_bpf"];
    CHECK(why.find("security_bpf takes (integer, pointer, integer, integer, pointer) in this kernel") !=
          std::string::npos);
    CHECK(why.find("cerb_bpf is written for (integer, pointer, integer)") != std::string::npos);
    CHECK(why.find("cerb_bpf_from_kernel is written for (integer, pointer, integer, integer)") != std::string::npos);
    CHECK(selection.left_out.count("cerb_perf_event_open") == 1);
    auto lost = covered_kinds(every_program(ProgramSet::fmod_ret), ProgramSet::fmod_ret) &
                ~covered_kinds(selection.programs, ProgramSet::fmod_ret);
    CHECK(lost == kind_bit(policy::RuleKind::escalation));
}

TEST_CASE("bpf hooks: a missing, reshaped or void function makes its hook unavailable, saying why")
{
    auto functions = kernel_6_1();
    std::erase_if(functions, [](const FakeFunction& f) { return f.name == "security_create_user_ns"; });
    for (auto& function : functions) {
        if (function.name == "security_mmap_file")
            function.params = "piii"; // as the LSM hook: the program would read flags as its return value
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
    CHECK(mmap->find("takes (pointer, integer, integer, integer)") != std::string::npos);

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
    const auto set = ProgramSet::bpf_lsm;
    auto all = covered_kinds(every_program(set), set);
    for (auto kind : policy::all_rule_kinds)
        CHECK((all & kind_bit(kind)) != 0);

    auto without = [&](std::initializer_list<const char*> gone) {
        auto programs = every_program(set);
        for (const char* program : gone)
            programs.erase(program);
        return all & ~covered_kinds(programs, set); // what is lost
    };
    CHECK(without({"cerb_userns_create"}) == kind_bit(RuleKind::escalation));
    CHECK(without({"cerb_capable"}) == kind_bit(RuleKind::forbidden_caps));
    CHECK(without({"cerb_mmap_file"}) == (kind_bit(RuleKind::allowed_bins) | kind_bit(RuleKind::exec_mappings)));
    CHECK(without({"cerb_socket_create"}) == (kind_bit(RuleKind::allowed_hosts) | kind_bit(RuleKind::raw_sockets)));
    // One variant of a hook is enough; none is not.
    CHECK(without({"cerb_bpf"}) == 0);
    CHECK(without({"cerb_bpf_from_kernel"}) == 0);
    CHECK(without({"cerb_bpf", "cerb_bpf_from_kernel"}) == kind_bit(RuleKind::escalation));
    auto path_kinds = kind_bit(RuleKind::paths) | kind_bit(RuleKind::path_changes) | kind_bit(RuleKind::denied_paths) |
                      kind_bit(RuleKind::unix_sockets);
    CHECK(without({"cerb_unix_may_send"}) == path_kinds);
    CHECK(without({"cerb_inode_setattr", "cerb_inode_setattr_no_idmap"}) == path_kinds);
    CHECK(without({"cerb_sb_mount"}) ==
          (path_kinds | kind_bit(RuleKind::allowed_bins) | kind_bit(RuleKind::exec_mappings)));
    CHECK(without({"cerb_bprm_committed_creds"}) == all); // nothing is armed without it
}

TEST_CASE("enforcement: the fmod_ret backend is built, and named as --enforcement takes it")
{
    CHECK(policy::parse_enforcement("fmod-ret") == policy::Enforcement::fmod_ret);
    CHECK(policy::backend(policy::Enforcement::fmod_ret).kind() == policy::Enforcement::fmod_ret);
    CHECK(std::string(policy::enforcement_name(policy::Enforcement::fmod_ret)) == "fmod-ret");
    CHECK_FALSE(policy::parse_enforcement("fmod_ret"));
}
