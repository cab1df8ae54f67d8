// SPDX-License-Identifier: Apache-2.0
#include "oci/spec_default.hpp"

#include <unistd.h>

using nlohmann::json;

namespace cerberus::spec {

json default_config(const DefaultOptions& options)
{
    json caps = {"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"};
    json config = {
        {"ociVersion", "1.1.0"},
        {"process",
         {{"terminal", true},
          {"user", {{"uid", 0}, {"gid", 0}}},
          {"args", {"sh"}},
          {"env", {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"}},
          {"cwd", "/"},
          {"capabilities", {{"bounding", caps}, {"effective", caps}, {"permitted", caps}, {"ambient", caps}}},
          {"rlimits", {{{"type", "RLIMIT_NOFILE"}, {"hard", 1024}, {"soft", 1024}}}},
          {"noNewPrivileges", true}}},
        {"root", {{"path", "rootfs"}, {"readonly", true}}},
        {"hostname", "cerberus"},
        {"mounts",
         {{{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
          {{"destination", "/dev"},
           {"type", "tmpfs"},
           {"source", "tmpfs"},
           {"options", {"nosuid", "strictatime", "mode=755", "size=65536k"}}},
          {{"destination", "/dev/pts"},
           {"type", "devpts"},
           {"source", "devpts"},
           {"options", {"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}}},
          {{"destination", "/dev/shm"},
           {"type", "tmpfs"},
           {"source", "shm"},
           {"options", {"nosuid", "noexec", "nodev", "mode=1777", "size=65536k"}}},
          {{"destination", "/dev/mqueue"}, {"type", "mqueue"}, {"source", "mqueue"}, {"options", {"nosuid", "noexec", "nodev"}}},
          {{"destination", "/sys"}, {"type", "sysfs"}, {"source", "sysfs"}, {"options", {"nosuid", "noexec", "nodev", "ro"}}},
          {{"destination", "/sys/fs/cgroup"},
           {"type", "cgroup"},
           {"source", "cgroup"},
           {"options", {"nosuid", "noexec", "nodev", "relatime", "ro"}}}}},
        {"linux",
         {{"resources", {{"devices", {{{"allow", false}, {"access", "rwm"}}}}}},
          {"namespaces", {{{"type", "pid"}}, {{"type", "network"}}, {{"type", "ipc"}}, {{"type", "uts"}}, {{"type", "mount"}}}},
          {"maskedPaths",
           {"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
            "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"}},
          {"readonlyPaths", {"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}}}},
    };
    auto& linux = config["linux"];
    if (options.cgroup_namespace)
        linux["namespaces"].push_back({{"type", "cgroup"}});
    if (options.rootless) {
        linux["namespaces"].push_back({{"type", "user"}});
        linux["uidMappings"] = {{{"containerID", 0}, {"hostID", ::getuid()}, {"size", 1}}};
        linux["gidMappings"] = {{{"containerID", 0}, {"hostID", ::getgid()}, {"size", 1}}};
        linux.erase("resources");
    }
    return config;
}

} // namespace cerberus::spec
