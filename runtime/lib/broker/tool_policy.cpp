// SPDX-License-Identifier: Apache-2.0
#include "broker/tool_policy.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "broker/broker_registry.hpp"
#include "cerberus_policy.h"
#include "cgroup/cgroup.hpp"
#include "policy/container_part.hpp"
#include "policy/landlock.hpp"
#include "policy/policy_compile.hpp"
#include "policy/socket_programs.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <thread>
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
    auto text = read_host_file(path, "a tool's policy");
    if (!text)
        return std::nullopt;
    return with_context(path, [&] {
        auto policy = policy::parse_policy(*text);
        check_fits_a_tool(policy);
        return policy;
    });
}

ToolConfinement::ToolConfinement(const policy::Policy& policy, const std::string& cgroup2, const std::string& name,
                                 int workdir_fd)
{
    try {
        if (policy.restricts_paths() || policy.allowed_bins) {
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
        }
        if (!policy.allowed_hosts)
            return;
        std::string parent = cgroup2 + "/cerberus-tools";
        files::make_dirs(parent, 0755);
        dir_ = parent + "/" + name;
        check(mkdir(dir_.c_str(), 0755), "making the tool's cgroup " + dir_);
        dir_fd_.reset(open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        procs_.reset(open((dir_ + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC));
        cgroup_id_ = cgroups::directory_id(dir_);
        if (!dir_fd_ || !procs_ || cgroup_id_ == 0)
            throw_errno("opening the tool's cgroup " + dir_);
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
    : dir_(std::exchange(other.dir_, {})), keys_file_(std::exchange(other.keys_file_, {})),
      dir_fd_(std::move(other.dir_fd_)), procs_(std::move(other.procs_)), ruleset_(std::move(other.ruleset_)),
      cgroup_id_(std::exchange(other.cgroup_id_, 0))
{
}

ToolConfinement::~ToolConfinement()
{
    release();
}

void ToolConfinement::release() noexcept
{
    ruleset_.reset();
    procs_.reset();
    if (dir_.empty())
        return;
    int kill = openat(dir_fd_.get(), "cgroup.kill", O_WRONLY | O_CLOEXEC);
    if (kill >= 0) {
        if (write(kill, "1", 1) < 0)
            spdlog::warn("killing what is left in {}: {}", dir_, std::strerror(errno));
        close(kill);
    }
    if (!keys_file_.empty()) {
        try {
            policy::remove_container_part({cgroup_id_, dir_fd_.get()}, keys_file_);
        } catch (const Error& e) {
            spdlog::warn("{}", e.what());
        }
        unlink(keys_file_.c_str());
    }
    dir_fd_.reset();
    // The killed processes leave the cgroup as they exit.
    for (int tries = 0; rmdir(dir_.c_str()) != 0 && errno == EBUSY && tries < 100; ++tries)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rmdir(dir_.substr(0, dir_.rfind('/')).c_str()); // cerberus-tools, unless another call is in it
    dir_.clear();
}

} // namespace cerberus::broker
