// SPDX-License-Identifier: Apache-2.0
// features: what this runtime supports, in the runtime-spec features format.
#include "commands.hpp"
#include "options.hpp"
#include "policy/policy.hpp"
#include "process/capabilities.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>

using nlohmann::json;

namespace cerberus::cli {

int cmd_features(const RuntimeOptions&, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 0, 0, "cerberus features");
    json caps = json::array();
    for (unsigned cap = 0; cap <= capabilities::kernel_last_cap(); ++cap)
        if (auto name = capabilities::capability_name(cap); !name.empty())
            caps.push_back(std::string(name));
    json features = {
        {"ociVersionMin", "1.0.0"},
        {"ociVersionMax", "1.1.0"},
        {"hooks", {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"}},
        {"mountOptions",
         {"async", "atime", "bind", "dev", "diratime", "dirsync", "exec", "loud", "mand", "noatime", "nodev",
          "nodiratime", "noexec", "nomand", "norelatime", "nostrictatime", "nosuid", "private", "rbind", "relatime",
          "remount", "ro", "rprivate", "rshared", "rslave", "runbindable", "rw", "shared", "silent", "slave",
          "strictatime", "suid", "sync", "unbindable"}},
        {"linux",
         {{"namespaces", {"cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts"}},
          {"capabilities", caps},
          {"cgroup", {{"v1", true}, {"v2", true}, {"systemd", true}, {"systemdUser", false}}},
          {"seccomp",
           {{"enabled", true},
            {"actions",
             {"SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD",
              "SCMP_ACT_LOG", "SCMP_ACT_NOTIFY", "SCMP_ACT_TRACE", "SCMP_ACT_TRAP"}},
            {"operators",
             {"SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE", "SCMP_CMP_LT", "SCMP_CMP_MASKED_EQ",
              "SCMP_CMP_NE"}},
            {"archs",
             {"SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM", "SCMP_ARCH_MIPS", "SCMP_ARCH_PPC64", "SCMP_ARCH_PPC64LE",
              "SCMP_ARCH_RISCV64", "SCMP_ARCH_S390", "SCMP_ARCH_S390X", "SCMP_ARCH_X32", "SCMP_ARCH_X86",
              "SCMP_ARCH_X86_64"}},
            {"knownFlags", {"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"}}}},
          {"apparmor", {{"enabled", false}}},
          {"selinux", {{"enabled", false}}}}},
        {"annotations",
         {{policy::inline_annotation, "agent policy as inline JSON"},
          {policy::profile_annotation, "name of a policy file in the policy directory"}}},
        {"potentiallyUnsafeConfigAnnotations", {policy::inline_annotation, policy::profile_annotation}},
    };
    std::printf("%s\n", features.dump(4).c_str());
    return 0;
}

} // namespace cerberus::cli
