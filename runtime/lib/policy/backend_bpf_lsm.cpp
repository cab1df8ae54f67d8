// SPDX-License-Identifier: Apache-2.0
#include "policy/backend_bpf_lsm.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cerberus_policy.skel.h"
#include "policy/bpf_objects.hpp"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/statfs.h>

#include <cstring>
#include <memory>
#include <vector>

namespace cerberus::policy {
namespace {

constexpr const char* group = "lsm"; // <pin dir>/lsm_*: the attached programs' links
// A refused load is remembered for the boot: auto then does not retry it on every create.
constexpr const char* refusal_record = "/run/cerberus-enforcement/bpf-lsm.refused";

struct SkeletonDeleter {
    void operator()(cerberus_policy* skeleton) const { cerberus_policy__destroy(skeleton); }
};
struct LinkDeleter {
    void operator()(bpf_link* link) const { bpf_link__destroy(link); }
};

std::string boot_id()
{
    std::string id = files::read_file_if_exists("/proc/sys/kernel/random/boot_id").value_or("");
    return id.substr(0, id.find('\n'));
}

// Loads the programs (creating or reusing the shared maps) and pins a link
// for each attached one. Throws, saying what the kernel refused.
void load_and_pin()
{
    bpf::forward_libbpf_messages();
    auto opts = bpf::shared_map_options();
    std::unique_ptr<cerberus_policy, SkeletonDeleter> skeleton(cerberus_policy__open_opts(&opts));
    if (!skeleton)
        throw_errno("opening the BPF LSM object");
    if (int err = cerberus_policy__load(skeleton.get()))
        throw Error(std::string("the kernel refused to load the LSM programs: ") + errno_text(-err), -err);
    bpf::initialize_config();
    // Pinned links outlive these handles, but the handles must outlive pin_group,
    // which pins the marker (one link's fd) again once every link is pinned.
    std::vector<std::unique_ptr<bpf_link, LinkDeleter>> links;
    bpf::pin_group(group, [&](const std::string& prefix) {
        int marker = -1;
        bpf_program* program = nullptr;
        bpf_object__for_each_program(program, skeleton->obj)
        {
            std::string name = bpf_program__name(program);
            links.emplace_back(bpf_program__attach(program));
            if (!links.back())
                throw Error("attaching " + name + ": " + errno_text(errno), errno);
            check(bpf_link__pin(links.back().get(), (prefix + name).c_str()), "pinning link " + name);
            marker = bpf_link__fd(links.back().get());
        }
        return marker;
    });
}

class BpfLsm final : public Backend {
public:
    Enforcement kind() const override { return Enforcement::bpf_lsm; }

    Probe probe() const override
    {
        if (bpf::group_pinned(group))
            return {true, "LSM programs attached"};
        std::string lsms = active_lsms();
        if (("," + lsms + ",").find(",bpf,") == std::string::npos)
            return {false, "\"bpf\" is not in the active LSM list (\"" + lsms + "\"; boot with lsm=" + lsms + ",bpf)"};
        if (auto refused = files::read_file_if_exists(refusal_record)) {
            auto newline = refused->find('\n');
            if (newline != std::string::npos && refused->substr(0, newline) == boot_id())
                return {false, refused->substr(newline + 1)};
        }
        try {
            bpf::PinDirLock lock;
            if (!bpf::group_pinned(group)) // another create may have loaded them while we waited
                load_and_pin();
            return {true, "LSM programs attached"};
        } catch (const Error& e) {
            std::string why = std::string("\"bpf\" is an active LSM but ") + e.what();
            try {
                files::make_dirs("/run/cerberus-enforcement", 0700);
                files::write_file_atomic(refusal_record, boot_id() + "\n" + why, 0600);
            } catch (const Error&) {
            }
            return {false, why};
        }
    }

    std::vector<Coverage> coverage() const override
    {
        auto row = [](RuleKind kind, std::string note = "") {
            return Coverage{kind, Level::full, true, true, std::move(note)};
        };
        return {row(RuleKind::allowed_hosts), row(RuleKind::raw_sockets), row(RuleKind::paths),
                row(RuleKind::path_changes), row(RuleKind::denied_paths), row(RuleKind::unix_sockets),
                row(RuleKind::allowed_bins), row(RuleKind::exec_mappings), row(RuleKind::forbidden_caps),
                row(RuleKind::escalation)};
    }

    void adapt_spec(const Policy&, spec::Spec&, const std::string&) const override {}

    void install(const CompiledPolicy& compiled, const ContainerCgroup&, const std::string& keys_file) const override
    {
        bpf::install_entries(compiled, keys_file);
    }

    void remove(const ContainerCgroup& cgroup, const std::string& keys_file) const override
    {
        bpf::remove_entries(cgroup.id, keys_file, cgroup.pin_dir);
    }

    uint64_t path_seed() const override
    {
        auto maps = bpf::PolicyMaps::open_pinned();
        if (!maps)
            throw Error("the BPF LSM maps are not pinned under " CERB_PIN_DIR, ENOENT);
        return maps->path_seed();
    }

    ProcessRestrictions restrictions(const Policy&, const spec::Spec&) const override { return {}; }
    void fill_restrictions(const Policy&, ProcessRestrictions&, int) const override {}

    void exempt_until_exec(pid_t pid, const ContainerCgroup& cgroup) const override
    {
        auto maps = bpf::PolicyMaps::open_pinned(cgroup.pin_dir);
        if (!maps)
            throw Error("the policy of cgroup " + std::to_string(cgroup.id) + " is not loaded: " + cgroup.pin_dir +
                            " holds no maps",
                        ENOENT);
        maps->mark_setup_task(pid, cgroup.id);
    }
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
    static const BpfLsm instance;
    return instance;
}

} // namespace cerberus::policy
