// SPDX-License-Identifier: Apache-2.0
#include "policy/backend_bpf.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cerberus_policy.skel.h"
#include "cerberus_policy_fmod_ret.skel.h"
#include "kernel/boot_record.hpp"
#include "kernel/preemption.hpp"
#include "policy/bpf_hooks.hpp"
#include "policy/bpf_objects.hpp"
#include "policy/container_part.hpp"
#include "policy/socket_programs.hpp"

#include <dirent.h>
#include <linux/magic.h>
#include <spdlog/spdlog.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/utsname.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace cerberus::policy {
namespace {

using bpf::ProgramSet;

struct ObjectDeleter {
    void operator()(bpf_object* object) const { bpf_object__close(object); }
};
struct LinkDeleter {
    void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};

// What differs between the two sets of programs.
struct SetTraits {
    ProgramSet set;
    Enforcement kind;
    const char* group;          // <pin dir>/<group>_<program>: the attached programs' links
    // Both records are kept per layout of the programs (another build's programs may load, or route, otherwise).
    const char* refusal_record; // a refused load, remembered for the boot: auto does not retry it on every create
    const char* routed_record;  // the hooks this kernel routes elsewhere, found at load: coverage() then reads no BTF
    const char* programs;       // for messages
    uint32_t backend_flag;      // CERB_BACKEND_*: the entries these programs enforce
    const void* (*elf_bytes)(size_t*);
};

const SetTraits lsm_traits{ProgramSet::bpf_lsm,
                           Enforcement::bpf_lsm,
                           "lsm",
                           "/run/cerberus-enforcement/" CERB_LAYOUT_ID "/bpf-lsm.refused",
                           "/run/cerberus-enforcement/" CERB_LAYOUT_ID "/bpf-lsm.routed",
                           "LSM programs",
                           CERB_BACKEND_BPF_LSM,
                           cerberus_policy__elf_bytes};
const SetTraits fmod_ret_traits{ProgramSet::fmod_ret,
                                Enforcement::fmod_ret,
                                "fmod_ret",
                                "/run/cerberus-enforcement/" CERB_LAYOUT_ID "/fmod-ret.refused",
                                "/run/cerberus-enforcement/" CERB_LAYOUT_ID "/fmod-ret.routed",
                                "fmod_ret programs",
                                CERB_BACKEND_FMOD_RET,
                                cerberus_policy_fmod_ret__elf_bytes};

// The programs of a group pinned here: <group>_<program> for each.
std::set<std::string> pinned_programs(const std::string& group, const std::string& pin_dir = CERB_PIN_DIR)
{
    std::set<std::string> programs;
    std::unique_ptr<DIR, int (*)(DIR*)> dir(opendir(pin_dir.c_str()), [](DIR* d) { return closedir(d); });
    if (!dir)
        return programs;
    std::string prefix = group + std::string("_");
    while (auto* entry = readdir(dir.get())) {
        std::string name = entry->d_name;
        if (name.rfind(prefix, 0) == 0 && bpf::find_hook(name.substr(prefix.size())))
            programs.insert(name.substr(prefix.size()));
    }
    return programs;
}

// Loads the set's programs (creating or reusing the shared maps) and pins a
// link for each attached one: per hook, the variant written for the kernel's
// prototype (BTF). A hook whose kernel function is missing or has a prototype
// no variant is written for, or whose trampoline already holds the most
// programs the kernel allows (38 on x86-64, shared with every other tool), is
// left out before loading; coverage() then refuses the rules that need it. The slots
// are counted first, never found by an attach the kernel refuses (see
// bpf::trampoline_use). Throws, saying what the kernel refused.
void load_and_pin(const SetTraits& traits)
{
    bpf::forward_libbpf_messages();
    auto kernel_btf = bpf::load_kernel_btf();
    auto selection = bpf::select_programs(kernel_btf.get(), traits.set, bpf::trampoline_use());
    auto opts = bpf::shared_map_options();
    size_t size = 0;
    const void* bytes = traits.elf_bytes(&size);
    std::unique_ptr<bpf_object, ObjectDeleter> object(bpf_object__open_mem(bytes, size, &opts));
    if (!object)
        throw_errno(std::string("opening the ") + traits.programs);
    bpf_program* program = nullptr;
    bpf_object__for_each_program(program, object.get())
    {
        std::string name = bpf_program__name(program);
        const bpf::Hook* hook = bpf::find_hook(name);
        if (!hook || !bpf::in_set(*hook, traits.set))
            throw Error("BPF program " + name + " is not in policy_hooks for the " + traits.programs, EPROTO);
        if (selection.programs.count(name))
            continue;
        if (auto why = selection.left_out.find(name); why != selection.left_out.end())
            spdlog::info("{}: leaving out {}: {}", enforcement_name(traits.kind), name, why->second);
        check(bpf_program__set_autoload(program, false), "leaving out " + name);
    }
    if (int err = bpf_object__load(object.get()))
        throw Error(std::string("the kernel refused to load the ") + traits.programs + ": " + errno_text(-err), -err);
    std::string routed;
    for (const auto& program : selection.not_needed)
        routed += program + "\n";
    kernel::write_boot_record(traits.routed_record, routed);
    bpf::initialize_config();
    // Pinned links outlive these handles, but the handles must outlive pin_group,
    // which pins the marker (one link's fd) again once every link is pinned.
    std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links;
    kernel::pin_group(traits.group, [&](const std::string& prefix) {
        int marker = -1;
        bpf_object__for_each_program(program, object.get())
        {
            if (!bpf_program__autoload(program))
                continue;
            std::string name = bpf_program__name(program);
            links.emplace_back(bpf_program__attach(program));
            // Another tool took the last slot since they were counted: nothing was attached, and nothing
            // on that function is detached or attached again here.
            if (!links.back() && errno == E2BIG) {
                spdlog::info("{}: leaving out {}: its kernel function has the most programs the kernel allows",
                             enforcement_name(traits.kind), name);
                links.pop_back();
                continue;
            }
            if (!links.back())
                throw Error("attaching " + name + ": " + errno_text(errno), errno);
            check(bpf_link__pin(links.back().get(), (prefix + name).c_str()), "pinning link " + name);
            marker = bpf_link__fd(links.back().get());
        }
        if (marker < 0)
            throw Error(std::string("no ") + traits.programs + " could be attached", ENOENT);
        return marker;
    });
}

// The first Linux release on which the lane's churn (tests/vm/cases/soak_fmod_ret.sh) left the fmod_ret
// programs running; Debian's 6.1 skipped them after it, letting denials through (docs/policy.md, "fmod-ret,
// settled"). Before it the backend is refused, asked for or not: a kernel with the fix backported is not
// recognised, and the landlock backend runs there.
constexpr std::pair<int, int> fmod_ret_sound_from{6, 12};

// Why the fmod_ret programs cannot be relied on here, or nullopt: an older kernel (above), or one that
// preempts kernel code, where the trampoline skips a program a preempted task was running when another task
// on that CPU enters it (Debian's 7.2, preempt=lazy: recursion misses on cerb_file_open among others).
std::optional<std::string> fmod_ret_unsound()
{
    utsname host{};
    int major = 0;
    int minor = 0;
    if (uname(&host) != 0 || std::sscanf(host.release, "%d.%d", &major, &minor) != 2 ||
        std::pair(major, minor) < fmod_ret_sound_from)
        return std::string("Linux ") + host.release + " is older than " +
               std::to_string(fmod_ret_sound_from.first) + "." + std::to_string(fmod_ret_sound_from.second) +
               ": before it the kernel was seen skipping fmod_ret programs after BPF objects came and went, "
               "letting denials through (docs/policy.md, \"fmod-ret, settled\")";
    auto model = kernel::preemption_model();
    if (!model)
        return std::string("the kernel's preemption model cannot be read (debugfs's sched/preempt): where it "
                           "preempts kernel code, fmod_ret programs are skipped (docs/policy.md, \"fmod-ret, settled\")");
    if (kernel::preempts_kernel_code(*model))
        return "this kernel preempts kernel code (preempt=" + *model +
               "): a task preempted inside an fmod_ret program makes the trampoline skip that program for the "
               "next task on its CPU, letting its call through (docs/policy.md, \"fmod-ret, settled\")";
    return std::nullopt;
}

class BpfPrograms final : public Backend {
public:
    explicit BpfPrograms(const SetTraits& traits) : traits_(traits) {}

    Enforcement kind() const override { return traits_.kind; }

    Probe probe() const override
    {
        std::string attached = std::string(traits_.programs) + " attached";
        if (traits_.set == ProgramSet::fmod_ret)
            if (auto why = fmod_ret_unsound())
                return {false, *why};
        if (kernel::group_pinned(traits_.group))
            return {true, attached};
        if (traits_.set == ProgramSet::bpf_lsm) {
            // Without "bpf" in the list the kernel loads and attaches LSM programs, and never calls them.
            std::string lsms = active_lsms();
            if (("," + lsms + ",").find(",bpf,") == std::string::npos)
                return {false, "\"bpf\" is not in the active LSM list (\"" + lsms + "\"; boot with lsm=" + lsms + ",bpf)"};
        }
        if (auto refused = kernel::read_boot_record(traits_.refusal_record))
            return {false, *refused};
        try {
            kernel::PinDirLock lock;
            if (!kernel::group_pinned(traits_.group)) // another create may have loaded them while we waited
                load_and_pin(traits_);
            return {true, attached};
        } catch (const Error& e) {
            std::string why = traits_.set == ProgramSet::bpf_lsm ? std::string("\"bpf\" is an active LSM but ") + e.what()
                                                                 : std::string(e.what());
            kernel::write_boot_record(traits_.refusal_record, why);
            return {false, why};
        }
    }

    // Every kind whose hooks are all attached (or, before loading, all in
    // the kernel's BTF); the others cannot be enforced, naming the functions
    // they lack.
    std::vector<Coverage> coverage() const override
    {
        // A set refused on this kernel covers nothing, and says why without reading the kernel's BTF (a
        // quarter second under emulation, on every `cerberus check`).
        if (traits_.set == ProgramSet::fmod_ret)
            if (auto why = fmod_ret_unsound()) {
                std::vector<Coverage> rows;
                for (RuleKind kind : all_rule_kinds)
                    rows.push_back({kind, Level::none, false, false, *why});
                return rows;
            }
        bool loaded = kernel::group_pinned(traits_.group);
        std::set<std::string> usable;
        std::set<std::string> not_needed;           // hooks this kernel routes elsewhere
        std::map<std::string, std::string> missing; // program -> why its hook has no program
        // Parsing the kernel's BTF costs a create 4 ms natively (40 ms cold, a quarter second under emulation),
        // and what it tells once the programs are loaded was recorded by the load.
        auto routed = loaded ? kernel::read_boot_record(traits_.routed_record) : std::nullopt;
        if (routed) {
            std::istringstream names(*routed);
            for (std::string name; std::getline(names, name);)
                not_needed.insert(name);
        } else {
            try {
                auto kernel_btf = bpf::load_kernel_btf();
                auto selection = bpf::select_programs(kernel_btf.get(), traits_.set,
                                                      loaded ? bpf::TrampolineUse{} : bpf::trampoline_use());
                not_needed = std::move(selection.not_needed);
                if (!loaded) {
                    usable = std::move(selection.programs);
                    missing = std::move(selection.left_out);
                }
            } catch (const Error& e) {
                for (const auto& hook : bpf::policy_hooks())
                    missing[hook.program] = e.what();
            }
        }
        if (loaded) {
            usable = pinned_programs(traits_.group);
            std::set<std::string> attached; // kernel functions with a program pinned here (or not needed)
            for (const auto& hook : bpf::policy_hooks())
                if (bpf::in_set(hook, traits_.set) && (usable.count(hook.program) || not_needed.count(hook.program)))
                    attached.insert(bpf::attach_function(hook, traits_.set));
            missing.clear();
            for (const auto& hook : bpf::policy_hooks())
                if (bpf::in_set(hook, traits_.set) && !attached.count(bpf::attach_function(hook, traits_.set)))
                    missing[hook.program] = bpf::attach_function(hook, traits_.set) +
                                            " was left out when the programs were loaded here (missing, another "
                                            "prototype, or its trampoline full)";
        }
        bpf::RuleKinds covered = bpf::covered_kinds(usable, traits_.set, not_needed);
        std::vector<Coverage> rows;
        for (RuleKind kind : all_rule_kinds) {
            if (covered & bpf::kind_bit(kind)) {
                rows.push_back({kind, Level::full, true, true, ""});
                continue;
            }
            std::string note;
            for (const auto& hook : bpf::policy_hooks())
                if ((hook.kinds & bpf::kind_bit(kind)) && missing.count(hook.program) &&
                    note.find(missing[hook.program]) == std::string::npos)
                    note += (note.empty() ? "" : "; ") + missing[hook.program];
            rows.push_back({kind, Level::none, false, false, note});
        }
        return rows;
    }

    void adapt_spec(const Policy&, spec::Spec&, const std::string&) const override {}

    // Under allowed_hosts the cgroup egress program checks where packets
    // really go: the hooks see the address the caller named, not the route
    // options, cmsgs or tunnels send them by. Under names every socket
    // program: the hooks let DNS queries through for them to steer to the gate.
    void install(const CompiledPolicy& compiled, const ContainerCgroup& cgroup,
                 const std::string& keys_file) const override
    {
        std::optional<socket_programs::Set> programs;
        if (compiled.policy.flags & CERB_HAS_HOSTS) {
            socket_programs::ensure_loaded();
            programs = (compiled.policy.flags & CERB_HAS_NAMES) ? socket_programs::Set::every
                                                                : socket_programs::Set::egress;
        }
        install_container_part(compiled, cgroup, keys_file, traits_.backend_flag, programs);
    }

    void remove(const ContainerCgroup& cgroup, const std::string& keys_file) const override
    {
        remove_container_part(cgroup, keys_file);
    }

    uint64_t path_seed() const override
    {
        auto maps = bpf::PolicyMaps::open_pinned();
        if (!maps)
            throw Error(std::string("the policy maps are not pinned under ") + CERB_PIN_DIR, ENOENT);
        return maps->path_seed();
    }

    // Path rules follow names: a denied path's files may have no other name
    // (a hard link, another mount) for the rule to miss.
    ProcessRestrictions restrictions(const Policy& policy, const spec::Spec&) const override
    {
        ProcessRestrictions restrictions;
        for (const auto& path : policy.denied_paths)
            restrictions.path_mounts.push_back({mounts::PathMount::Kind::sole_name, path, false});
        return restrictions;
    }
    void fill_restrictions(const Policy&, ProcessRestrictions&, int) const override {}

    void exempt_until_exec(pid_t pid, const ContainerCgroup& cgroup) const override
    {
        bpf::mark_setup_task(cgroup.pin_dir, pid, cgroup.id);
    }

private:
    const SetTraits& traits_;
};

} // namespace

std::string active_lsms(const std::string& securityfs)
{
    struct statfs fs {};
    if (statfs(securityfs.c_str(), &fs) != 0 || static_cast<long>(fs.f_type) != SECURITYFS_MAGIC)
        mount("securityfs", securityfs.c_str(), "securityfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
    std::string list = files::read_file_if_exists(securityfs + "/lsm").value_or("");
    return list.substr(0, list.find('\n'));
}

const Backend& bpf_lsm_backend()
{
    static const BpfPrograms instance(lsm_traits);
    return instance;
}

const Backend& fmod_ret_backend()
{
    static const BpfPrograms instance(fmod_ret_traits);
    return instance;
}

} // namespace cerberus::policy
