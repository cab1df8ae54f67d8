// SPDX-License-Identifier: Apache-2.0
// Typed form of an OCI bundle's config.json (runtime-spec 1.1). Parsed and
// validated once, before the runtime touches the host.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::spec {

struct User {
    uint32_t uid = 0;
    uint32_t gid = 0;
    std::optional<uint32_t> umask;
    std::vector<uint32_t> additional_gids;
};

struct Capabilities {
    // Capability names as in config.json ("CAP_CHOWN").
    std::vector<std::string> bounding, effective, inheritable, permitted, ambient;
};

struct Rlimit {
    std::string type; // "RLIMIT_NOFILE"
    uint64_t hard = 0;
    uint64_t soft = 0;
};

struct ConsoleSize {
    unsigned height = 0;
    unsigned width = 0;
};

struct Process {
    bool terminal = false;
    std::optional<ConsoleSize> console_size;
    User user;
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::string cwd = "/";
    std::optional<Capabilities> capabilities;
    std::vector<Rlimit> rlimits;
    bool no_new_privileges = false;
    std::string apparmor_profile;
    std::optional<int> oom_score_adj;
    std::string selinux_label;
};

struct Root {
    std::string path; // as written in config.json
    bool readonly = false;
};

struct Mount {
    std::string destination;
    std::string type;
    std::string source;
    std::vector<std::string> options;
};

struct Hook {
    std::string path;
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::optional<int> timeout; // seconds
};

struct Hooks {
    std::vector<Hook> prestart, create_runtime, create_container, start_container, poststart, poststop;
};

// Each kind of hook as config.json names it, in the order they run.
struct HookKind {
    const char* name; // "createRuntime"
    std::vector<Hook> Hooks::*list;
};
inline constexpr HookKind hook_kinds[] = {
    {"prestart", &Hooks::prestart},           {"createRuntime", &Hooks::create_runtime},
    {"createContainer", &Hooks::create_container}, {"startContainer", &Hooks::start_container},
    {"poststart", &Hooks::poststart},         {"poststop", &Hooks::poststop},
};

struct Namespace {
    std::string type; // pid, network, mount, ipc, uts, user, cgroup, time
    std::string path; // empty: create a new one
};

struct IdMapping {
    uint32_t container_id = 0;
    uint32_t host_id = 0;
    uint32_t size = 0;
};

struct Device {
    std::string type; // c, b, u, p
    std::string path;
    int64_t major = 0;
    int64_t minor = 0;
    std::optional<uint32_t> file_mode;
    std::optional<uint32_t> uid;
    std::optional<uint32_t> gid;
};

struct DeviceRule {
    bool allow = false;
    std::string type = "a"; // a, c, b
    std::optional<int64_t> major; // empty: any
    std::optional<int64_t> minor;
    std::string access = "rwm";
};

struct MemoryResources {
    std::optional<int64_t> limit, reservation, swap, kernel, kernel_tcp;
    std::optional<uint64_t> swappiness;
    std::optional<bool> disable_oom_killer, use_hierarchy, check_before_update;
};

struct CpuResources {
    std::optional<uint64_t> shares;
    std::optional<int64_t> quota;
    std::optional<int64_t> burst;
    std::optional<uint64_t> period;
    std::optional<int64_t> realtime_runtime;
    std::optional<uint64_t> realtime_period;
    std::string cpus, mems;
    std::optional<int64_t> idle;
};

struct BlockIoDevice {
    int64_t major = 0;
    int64_t minor = 0;
    std::optional<uint16_t> weight, leaf_weight; // weight devices
    uint64_t rate = 0;                         // throttle devices
};

struct BlockIoResources {
    std::optional<uint16_t> weight, leaf_weight;
    std::vector<BlockIoDevice> weight_device;
    std::vector<BlockIoDevice> throttle_read_bps, throttle_write_bps, throttle_read_iops, throttle_write_iops;
};

struct HugepageLimit {
    std::string page_size; // "2MB"
    uint64_t limit = 0;
};

struct Resources {
    std::vector<DeviceRule> devices;
    std::optional<MemoryResources> memory;
    std::optional<CpuResources> cpu;
    std::optional<int64_t> pids_limit;
    std::optional<BlockIoResources> block_io;
    std::vector<HugepageLimit> hugepage_limits;
    std::map<std::string, std::string> unified;
};

struct SeccompArg {
    unsigned index = 0;
    uint64_t value = 0;
    uint64_t value_two = 0;
    std::string op; // SCMP_CMP_EQ ...
};

struct SeccompSyscall {
    std::vector<std::string> names;
    std::string action;
    std::optional<uint32_t> errno_ret;
    std::vector<SeccompArg> args;
};

struct Seccomp {
    std::string default_action;
    std::optional<uint32_t> default_errno_ret;
    std::vector<std::string> architectures;
    std::vector<std::string> flags;
    std::string listener_path;
    std::string listener_metadata;
    std::vector<SeccompSyscall> syscalls;
};

struct Linux {
    std::vector<Namespace> namespaces;
    std::vector<IdMapping> uid_mappings, gid_mappings;
    std::vector<Device> devices;
    std::string cgroups_path;
    std::optional<Resources> resources;
    std::string rootfs_propagation;
    std::vector<std::string> masked_paths, readonly_paths;
    std::map<std::string, std::string> sysctl;
    std::optional<Seccomp> seccomp;
    std::string mount_label;
};

struct Spec {
    std::string oci_version;
    Root root;
    std::optional<Process> process;
    std::string hostname;
    std::string domainname;
    std::vector<Mount> mounts;
    std::optional<Hooks> hooks;
    std::map<std::string, std::string> annotations;
    std::optional<Linux> linux;

    const Namespace* find_namespace(const std::string& type) const;
};

} // namespace cerberus::spec
