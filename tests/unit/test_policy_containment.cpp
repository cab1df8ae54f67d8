// SPDX-License-Identifier: Apache-2.0
// What keeps a policed agent in its cgroup on every backend: a cgroup
// namespace of its own, and no bind of the host's cgroup hierarchies.
#include "base/error.hpp"
#include "policy/policy_containment.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace cerberus;
using namespace cerberus::policy;

namespace {

// The host: cgroup2 at /sys/fs/cgroup/unified beside the v1 hierarchies, as on this development host.
cgroups::Mounts hybrid_host()
{
    return cgroups::Mounts::parse(
        "30 24 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755\n"
        "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
        "32 30 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n");
}

spec::Spec with_mounts(std::vector<spec::Mount> mounts, std::vector<std::string> bounding = {})
{
    spec::Spec spec;
    spec.mounts = std::move(mounts);
    spec.linux.emplace();
    spec.process.emplace();
    spec.process->capabilities.emplace();
    spec.process->capabilities->bounding = std::move(bounding);
    return spec;
}

} // namespace

TEST_CASE("containment: a policed container gets a cgroup namespace of its own; one joined by path is refused")
{
    Policy policy = parse_policy(R"({"allowed_hosts": []})");
    spec::Spec spec = with_mounts({});
    keep_in_cgroup(policy, spec, hybrid_host());
    const spec::Namespace* cgroup = spec.find_namespace("cgroup");
    REQUIRE(cgroup != nullptr);
    CHECK(cgroup->path.empty());
    keep_in_cgroup(policy, spec, hybrid_host()); // already there: not added twice
    CHECK(std::count_if(spec.linux->namespaces.begin(), spec.linux->namespaces.end(),
                        [](const auto& ns) { return ns.type == "cgroup"; }) == 1);

    spec::Spec joined = with_mounts({});
    joined.linux->namespaces = {{"pid", ""}, {"cgroup", "/proc/1/ns/cgroup"}};
    CHECK_THROWS_WITH_AS(keep_in_cgroup(policy, joined, hybrid_host()),
                         doctest::Contains("linux.namespaces[1].path: a policed container needs a cgroup namespace"),
                         Error);
}

TEST_CASE("containment: binds of the host's cgroup hierarchies are refused, naming the mount")
{
    Policy policy = parse_policy(R"({"allowed_hosts": []})");
    auto refused = [&](spec::Spec spec) {
        try {
            keep_in_cgroup(policy, spec, hybrid_host());
            return std::string();
        } catch (const Error& e) {
            return std::string(e.what());
        }
    };
    spec::Mount own_view{"/sys/fs/cgroup", "cgroup", "cgroup", {}};
    spec::Mount unified{"/cg", "bind", "/sys/fs/cgroup/unified", {"rbind"}};
    spec::Mount below{"/cg", "bind", "/sys/fs/cgroup/unified/system.slice", {"bind"}};
    spec::Mount above_recursive{"/hostsys", "bind", "/sys/fs", {"rbind"}};
    spec::Mount above_plain{"/hostsys", "bind", "/sys/fs", {"bind"}};
    CHECK(refused(with_mounts({own_view})).empty()); // a cgroup mount in its own namespace shows its own
    CHECK(refused(with_mounts({own_view, unified})).find("mounts[1] (/cg): a bind of the host's cgroup") == 0);
    CHECK_FALSE(refused(with_mounts({below})).empty());
    CHECK_FALSE(refused(with_mounts({above_recursive})).empty());
    CHECK(refused(with_mounts({above_plain})).empty()); // not recursive: the cgroup mounts below are not bound

    // Read-only stays read-only only when the agent cannot remount it.
    spec::Mount read_only{"/cg", "bind", "/sys/fs/cgroup/unified", {"rbind", "ro"}};
    CHECK(refused(with_mounts({read_only})).empty());
    CHECK_FALSE(refused(with_mounts({read_only}, {"CAP_SYS_ADMIN"})).empty());
    Policy no_admin = parse_policy(R"({"forbidden_caps": ["CAP_SYS_ADMIN"]})");
    spec::Spec forbidden = with_mounts({read_only}, {"CAP_SYS_ADMIN"});
    CHECK_NOTHROW(keep_in_cgroup(no_admin, forbidden, hybrid_host()));
}

TEST_CASE("containment: a writable cgroupfs in a shared pid namespace is refused where cgroup2 lacks nsdelegate")
{
    Policy policy = parse_policy(R"({"allowed_hosts": []})");
    cgroups::Mounts plain = cgroups::Mounts::parse("31 24 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
    REQUIRE_FALSE(plain.ns_delegate);
    spec::Spec writable = with_mounts({{"/sys/fs/cgroup", "cgroup", "cgroup", {"nosuid"}}});
    CHECK_THROWS_WITH_AS(keep_in_cgroup(policy, writable, plain),
                         doctest::Contains("mounts[0] (/sys/fs/cgroup): the container shares a pid namespace"), Error);
    spec::Spec delegated = writable;
    CHECK_NOTHROW(keep_in_cgroup(policy, delegated, hybrid_host())); // nsdelegate: the kernel refuses the pull
    spec::Spec own_pids = writable;
    own_pids.linux->namespaces = {{"pid", ""}};
    CHECK_NOTHROW(keep_in_cgroup(policy, own_pids, plain)); // no process outside has a number it can name
    spec::Spec read_only = with_mounts({{"/sys/fs/cgroup", "cgroup", "cgroup", {"ro"}}});
    CHECK_NOTHROW(keep_in_cgroup(policy, read_only, plain));
}

TEST_CASE("containment: the spec's writable cgroup mounts, shared pid and host network namespaces")
{
    spec::Spec spec = with_mounts({{"/proc", "proc", "proc", {}}, {"/sys/fs/cgroup", "cgroup", "cgroup", {"ro"}}});
    CHECK_FALSE(writable_cgroup_mount(spec));
    spec.mounts.push_back({"/cg2", "cgroup2", "none", {"nosuid"}});
    CHECK(writable_cgroup_mount(spec) == 2u);

    CHECK(shares_pid_namespace(spec)); // none of its own: the runtime's
    spec.linux->namespaces = {{"pid", "/proc/42/ns/pid"}};
    CHECK(shares_pid_namespace(spec)); // another container's
    spec.linux->namespaces = {{"pid", ""}};
    CHECK_FALSE(shares_pid_namespace(spec));
    CHECK(hybrid_host().ns_delegate);

    CHECK(shares_host_network(spec)); // no network namespace of its own: the host's
    spec.linux->namespaces = {{"network", "/proc/self/ns/net"}};
    CHECK(shares_host_network(spec));
    spec.linux->namespaces = {{"network", ""}};
    CHECK_FALSE(shares_host_network(spec));
}
