// SPDX-License-Identifier: Apache-2.0
#include "broker/tool_policy.hpp"

#include "audit/audit.hpp"
#include "base/error.hpp"
#include "base/files.hpp"
#include "broker/broker_registry.hpp"
#include "cerberus_policy.h"
#include "cgroup/cgroup.hpp"
#include "policy/container_part.hpp"
#include "policy/landlock.hpp"
#include "policy/policy_compile.hpp"
#include "policy/policy_document.hpp"
#include "policy/socket_programs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <csignal>
#include <utility>

namespace cerberus::broker {
namespace {

// What a process in the host's namespaces cannot be given, named by field.
void check_fits_a_tool(const policy::Policy& policy)
{
    auto refuse = [](const std::string& field, const std::string& why) {
        throw Error("policy." + field + ": " + why, EINVAL);
    };
    if (policy.mode != policy::Mode::enforce)
        refuse("mode", "a tool's policy enforces (audit mode is for the agent's)");
    if (policy.enforcement != policy::Enforcement::automatic)
        refuse("enforcement", "a tool's policy is enforced by the cgroup socket programs and Landlock");
    if (!policy.denied_paths.empty())
        refuse("denied_paths", "nothing is hidden from a tool (the files are the host's): leave such paths out of "
                               "allowed_paths and read_only_paths");
    if (!policy.forbidden_caps.empty())
        refuse("forbidden_caps", "the tool runs as nobody, with no capability to forbid");
    if (!policy.commands.empty())
        refuse("commands", "a tool calls no brokered tools");
    if (!policy.allowed_hosts)
        return;
    for (size_t i = 0; i < policy.allowed_hosts->size(); ++i)
        if (!(*policy.allowed_hosts)[i].network)
            refuse("allowed_hosts[" + std::to_string(i) + "]",
                   "host name " + (*policy.allowed_hosts)[i].text +
                       ": a tool runs in the host's network namespace, where no DNS gate answers; name its "
                       "addresses or networks (and the resolver's, if it looks names up)");
}

} // namespace

std::optional<policy::Policy> read_tool_policy(const std::string& tool, const std::string& dir)
{
    std::string path = dir + "/" + tool + ".policy";
    auto text = files::read_host_file(path, "a tool's policy");
    if (!text)
        return std::nullopt;
    return with_context(path, [&] {
        auto policy = policy::parse_policy(*text);
        check_fits_a_tool(policy);
        return policy;
    });
}

ToolConfinement::ToolConfinement(const policy::Policy& policy, const std::string& cgroup2, const std::string& name,
                                 int workdir_fd, const CallTrail& trail)
{
    try {
        bool path_rules = policy.restricts_paths() || policy.allowed_bins.has_value();
        if (path_rules) {
            int abi = landlock::abi_version();
            if (abi == 0)
                throw Error("the tool's policy has path rules and this kernel has no Landlock", EOPNOTSUPP);
            auto plan = landlock::plan_ruleset(policy, abi);
            ruleset_ = landlock::create_ruleset(plan);
            UniqueFd root(open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
            if (!root)
                throw_errno("opening / for the tool's landlock rules");
            landlock::add_rules(ruleset_.get(), plan, root.get());
            landlock::allow_directory(ruleset_.get(), plan, workdir_fd);
            ruleset_flags_ = landlock::restrict_flags(abi); // the tool is an exec away: its denials logged
        }
        // A cgroup of the call's own, also without hosts: by it the collector knows the tool's denials
        // (Landlock names the cgroup of a domain's maker) as the call's.
        files::make_dirs(cgroup2 + "/cerberus-tools", 0755);
        std::string dir = cgroup2 + "/cerberus-tools/" + name;
        check(mkdir(dir.c_str(), 0755), "making the tool's cgroup " + dir);
        // The call's cgroup is in the unified hierarchy only, whatever v1 hierarchies the host has.
        cgroups::Mounts unified_only{.layout = cgroups::Layout::unified, .unified = cgroup2};
        cgroup_.emplace(cgroups::Cgroup::open("/cerberus-tools/" + name, unified_only));
        dir_fd_.reset(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        procs_.reset(open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
        cgroup_id_ = cgroups::directory_id(dir);
        if (!dir_fd_ || !procs_ || cgroup_id_ == 0)
            throw_errno("opening the tool's cgroup " + dir);
        audit::register_brokered_call({.cgroup_id = cgroup_id_, .cgroup_dir = dir, .id = trail.id,
                                       .trail = trail.trail, .policy = policy::to_document(policy),
                                       .audit_log = path_rules, .brokered = trail.brokered});
        registered_ = true;
        if (!policy.allowed_hosts)
            return;
        policy::Policy hosts; // the paths are Landlock's, above; the maps hold only the hosts
        hosts.allowed_hosts = policy.allowed_hosts;
        auto compiled = policy::compile_policy(hosts, cgroup_id_, 0);
        compiled.policy.flags |= CERB_HOST_NETWORK; // its loopback device is the host's
        files::make_dirs(std::string(run_dir) + "/calls", 0700);
        keys_file_ = std::string(run_dir) + "/calls/" + name + ".keys";
        socket_programs::ensure_loaded();
        policy::install_container_part(compiled, {cgroup_id_, dir_fd_.get()}, keys_file_, CERB_BACKEND_LANDLOCK,
                                       socket_programs::Set::addresses); // no names: no DNS gate
    } catch (...) {
        release();
        throw;
    }
}

ToolConfinement::ToolConfinement(ToolConfinement&& other) noexcept
    : cgroup_(std::move(other.cgroup_)), keys_file_(std::exchange(other.keys_file_, {})),
      dir_fd_(std::move(other.dir_fd_)), procs_(std::move(other.procs_)), ruleset_(std::move(other.ruleset_)),
      cgroup_id_(std::exchange(other.cgroup_id_, 0)), ruleset_flags_(other.ruleset_flags_), registered_(std::exchange(other.registered_, false))
{
    other.cgroup_.reset();
}

ToolConfinement::~ToolConfinement()
{
    release();
}

void ToolConfinement::release() noexcept
{
    ruleset_.reset();
    procs_.reset();
    if (!cgroup_)
        return;
    try {
        cgroup_->kill_all(SIGKILL);
    } catch (const std::exception& e) {
        spdlog::warn("killing what is left of the tool: {}", e.what());
    }
    if (registered_)
        audit::finish_container(cgroup_id_, CERB_PIN_DIR); // its denials written before the call's record
    registered_ = false;
    if (!keys_file_.empty()) {
        try {
            policy::remove_container_part({cgroup_id_, dir_fd_.get()}, keys_file_);
        } catch (const std::exception& e) {
            spdlog::warn("{}", e.what());
        }
        unlink(keys_file_.c_str());
        keys_file_.clear();
    }
    dir_fd_.reset();
    try {
        cgroup_->destroy(); // waits for the killed processes to leave it
    } catch (const std::exception& e) {
        spdlog::warn("{}", e.what());
    }
    std::string dir = cgroup_->unified_dir();
    rmdir(dir.substr(0, dir.rfind('/')).c_str()); // cerberus-tools, unless another call is in it
    cgroup_.reset();
}

} // namespace cerberus::broker
