// SPDX-License-Identifier: Apache-2.0
#include "hook_stages.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cgroup/cgroup.hpp"
#include "container/container_policy.hpp"
#include "container/state.hpp"
#include "oci/spec_parse.hpp"
#include "oci/spec_validate.hpp"
#include "policy/policy_setup.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <sstream>

namespace cerberus::hook {
namespace {

std::string record_dir(const RuntimeOptions& rt, const std::string& id)
{
    return rt.root + "/" + id;
}

// The cgroup2 directory of a process ("/machine/ctr"), from /proc/PID/cgroup.
std::string cgroup2_path(pid_t pid)
{
    std::string file = "/proc/" + std::to_string(pid) + "/cgroup";
    std::istringstream lines(files::read_file(file));
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("0::", 0) == 0)
            return line.substr(3);
    }
    throw Error(file + ": the process is in no cgroup2 directory", ENOENT);
}

// The container's own cgroup2 directory: its id keys the policy, and the
// cgroup programs attach to it. The root or the hook's own directory would
// key the policy to processes outside the container.
struct OwnCgroup {
    uint64_t id = 0;
    UniqueFd dir;
};

OwnCgroup container_cgroup(pid_t pid)
{
    std::string path = cgroup2_path(pid);
    if (path == "/" || path == cgroup2_path(::getpid()))
        throw Error("container process " + std::to_string(pid) + " has no cgroup2 directory of its own (it is in " +
                        path + "), so no policy can be keyed to it",
                    EPERM);
    auto cgroup = cgroups::Cgroup::open(path);
    return {cgroup.id(), cgroup.open_unified_dir()};
}

// Undoes a half-done police, newest step first: the policy's entries (whose
// keys are in the record), then the record.
struct Rollback {
    ~Rollback()
    {
        if (!armed)
            return;
        policy->roll_back();
        // The record goes even then: no poststop follows a failed create.
        std::error_code ignored;
        std::filesystem::remove_all(dir, ignored);
    }

    bool armed = true;
    std::string dir;
    container::ContainerPolicy* policy;
};

std::string keys_file(const std::string& record_dir)
{
    return record_dir + "/policy.keys";
}

} // namespace

ContainerState parse_state(const std::string& json)
{
    try {
        auto state = nlohmann::json::parse(json);
        // A runtime may leave pid out once the process is gone (poststop).
        return ContainerState{state.at("id").get<std::string>(), state.value("pid", pid_t{0}),
                              state.at("bundle").get<std::string>()};
    } catch (const nlohmann::json::exception& e) {
        throw Error(std::string("the OCI state on stdin: ") + e.what(), EINVAL);
    }
}

void police(const RuntimeOptions& rt, const ContainerState& state)
{
    state::validate_id(state.id);
    if (state.pid <= 0)
        throw Error("the OCI state on stdin has no pid: is this hook run at createRuntime?", EINVAL);
    std::string config = state.bundle + "/config.json";
    spec::Spec spec = spec::load_bundle(state.bundle);
    auto policy = with_context(config, [&] { return policy_setup::resolve(rt, spec); });
    if (!policy)
        return;
    with_context(config + ": a hook cannot change the container's config", [&] {
        policy::require_policy_applied(*policy, spec);
    });
    // Names resolve only through the DNS gate, which the runtime serves the container from create on.
    for (size_t i = 0; policy->allowed_hosts && i < policy->allowed_hosts->size(); ++i)
        if (!(*policy->allowed_hosts)[i].host_name.empty())
            throw Error(config + ": policy.allowed_hosts[" + std::to_string(i) + "]: host names need the " +
                            "cerberus runtime, which runs the DNS gate (the OCI hook does not); list addresses " +
                            "instead, or run the container with the cerberus runtime",
                        EINVAL);
    if (policy->ask_hosts && !policy->ask_hosts->names.empty())
        throw Error(config + ": policy.ask_hosts: asked names need the cerberus runtime, which runs the DNS gate " +
                        "(the OCI hook does not)",
                    EINVAL);
    // Where the container is goes first: without a cgroup of its own nothing
    // can be keyed to it, whatever the kernel offers.
    OwnCgroup cgroup = container_cgroup(state.pid);
    spec::Spec as_runtime_would = spec; // the policy is applied to it; the container's config stays as it is
    auto owner = with_context(config, [&] {
        return container::ContainerPolicy::decide_for_hook(rt, state.id, std::move(*policy), as_runtime_would,
                                                           spec::resolve_rootfs(spec, state.bundle));
    });

    files::make_dirs(rt.root, 0700);
    Rollback rollback{.dir = record_dir(rt, state.id), .policy = &owner};
    if (::mkdir(rollback.dir.c_str(), 0700) < 0) {
        int err = errno;
        rollback.armed = false; // not ours to remove
        throw_errno(err == EEXIST ? "a container " + state.id + " is policed already: " + rollback.dir
                                  : "mkdir " + rollback.dir,
                    err);
    }
    // Written before the entries exist, so that poststop always finds them.
    files::write_file_atomic(rollback.dir + "/cgroup.id", std::to_string(cgroup.id), 0600);
    owner.install(cgroup.id, std::move(cgroup.dir), {"", keys_file(rollback.dir)});
    owner.keep();
    rollback.armed = false;
}

void release(const RuntimeOptions& rt, const ContainerState& state)
{
    state::validate_id(state.id);
    std::string dir = record_dir(rt, state.id);
    if (auto recorded = files::read_file_if_exists(dir + "/cgroup.id")) {
        uint64_t cgroup_id = with_context(dir + "/cgroup.id", [&] {
            try {
                return std::stoull(*recorded);
            } catch (const std::exception&) {
                throw Error("not a cgroup id: \"" + *recorded + "\"", EINVAL);
            }
        });
        container::ContainerPolicy::adopt(policy::enforcement_name(policy::Enforcement::bpf_lsm), CERB_PIN_DIR,
                                          cgroup_id, {"", keys_file(dir)})
            .retire();
    }
    std::filesystem::remove_all(dir);
}

} // namespace cerberus::hook
