// SPDX-License-Identifier: Apache-2.0
// The backends' pure parts: what the landlock backend asks of Landlock, the
// mounts and the seccomp filter it adds, refusals by coverage, and the policy's
// "enforcement" field with --lock-policy.
#include "base/error.hpp"
#include "policy/backend_landlock.hpp"
#include "policy/enforcement.hpp"
#include "policy/landlock.hpp"
#include "policy/policy_compile.hpp"

#include <doctest/doctest.h>

#include <linux/landlock.h>
#include <netinet/in.h>
#include <sched.h>

#include <algorithm>
#include <cstring>

using namespace cerberus;
using namespace cerberus::policy;

namespace {

const landlock::Grant* grant_for(const landlock::RulesetPlan& plan, const std::string& path)
{
    auto it = std::find_if(plan.grants.begin(), plan.grants.end(), [&](const auto& g) { return g.path == path; });
    return it == plan.grants.end() ? nullptr : &*it;
}

} // namespace

TEST_CASE("landlock plan: rights by list and ABI, execute only for listed programs")
{
    auto policy = parse_policy(R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr"]})");
    auto plan = landlock::plan_ruleset(policy, 1);
    CHECK((plan.handled & LANDLOCK_ACCESS_FS_REFER) == 0); // not before ABI 2
    CHECK((grant_for(plan, "/workspace")->access & LANDLOCK_ACCESS_FS_EXECUTE) != 0);
    CHECK((grant_for(plan, "/usr")->access & LANDLOCK_ACCESS_FS_WRITE_FILE) == 0);
    CHECK((grant_for(plan, "/usr")->access & LANDLOCK_ACCESS_FS_READ_FILE) != 0);
    CHECK_FALSE(plan.grant_interpreters);

    auto abi3 = landlock::plan_ruleset(policy, 3);
    CHECK((abi3.handled & LANDLOCK_ACCESS_FS_REFER) != 0);
    CHECK((abi3.handled & (1ULL << 14)) != 0); // truncate
    CHECK((grant_for(abi3, "/workspace")->access & (1ULL << 14)) != 0);
    CHECK((grant_for(abi3, "/usr")->access & (1ULL << 14)) == 0);

    auto bins = landlock::plan_ruleset(
        parse_policy(R"({"allowed_paths": ["/workspace"], "allowed_bins": ["/usr/bin/python3"]})"), 7);
    CHECK((grant_for(bins, "/workspace")->access & LANDLOCK_ACCESS_FS_EXECUTE) == 0);
    CHECK((grant_for(bins, "/usr/bin/python3")->access & LANDLOCK_ACCESS_FS_EXECUTE) != 0);
    CHECK(bins.grant_interpreters);

    auto only_bins = landlock::plan_ruleset(parse_policy(R"({"allowed_bins": ["/bin/sh"]})"), 7);
    CHECK(only_bins.handled == LANDLOCK_ACCESS_FS_EXECUTE);

    auto denied_only = landlock::plan_ruleset(parse_policy(R"({"denied_paths": ["/etc/shadow"]})"), 7);
    REQUIRE(grant_for(denied_only, "/") != nullptr);
    CHECK(grant_for(denied_only, "/")->access == denied_only.handled); // the covers do the denying

    CHECK(landlock::plan_ruleset(parse_policy(R"({"allowed_hosts": []})"), 7).handled == 0);
    CHECK(landlock::restrict_flags(7) != 0);
    CHECK(landlock::restrict_flags(6) == 0);
}

TEST_CASE("landlock mounts: writable before read-only before hidden, parents first, only what Landlock allows")
{
    using Kind = mounts::PathMount::Kind;
    auto planned = landlock_path_mounts(
        parse_policy(R"({"allowed_paths": ["/workspace/sub", "/workspace", "/"], "read_only_paths": ["/usr"],
                         "denied_paths": ["/workspace/.env", "/data/secret"], "allowed_bins": ["/usr/bin/x"]})"),
        true);
    std::vector<std::pair<Kind, std::string>> got;
    for (const auto& m : planned)
        got.emplace_back(m.kind, m.path);
    std::vector<std::pair<Kind, std::string>> want = {
        {Kind::writable, "/workspace"}, {Kind::writable, "/workspace/sub"}, {Kind::pinned, "/data"},
        {Kind::read_only, "/usr"},      {Kind::read_only, "/proc/sys"},     {Kind::hide, "/data/secret"},
        {Kind::hide, "/workspace/.env"}};
    CHECK(got == want); // "/" writable: nothing to bind, but /data, above a hidden path, is pinned
    CHECK(planned[0].no_exec);

    auto narrow = landlock_path_mounts(
        parse_policy(R"({"allowed_paths": ["/workspace"], "denied_paths": ["/workspace/.env", "/data/secret"]})"),
        false);
    // /data/secret is outside every list: Landlock denies it already, but a name of it in /workspace would not be
    REQUIRE(narrow.size() == 3);
    CHECK(narrow[1].kind == Kind::sole_name);
    CHECK(narrow[1].path == "/data/secret");
    CHECK(narrow[2].kind == Kind::hide);
    CHECK(narrow[2].path == "/workspace/.env");
    CHECK_FALSE(narrow.front().no_exec);
}

TEST_CASE("BPF backends: every denied path is checked for other names, and nothing is mounted")
{
    auto policy = parse_policy(R"({"allowed_paths": ["/workspace"], "denied_paths": ["/workspace/.env", "/data"]})");
    for (auto e : {Enforcement::bpf_lsm, Enforcement::fmod_ret}) {
        auto planned = backend(e).restrictions(policy, spec::Spec{}).path_mounts;
        REQUIRE(planned.size() == 2);
        for (const auto& m : planned)
            CHECK(m.kind == mounts::PathMount::Kind::sole_name);
    }
    CHECK(backend(Enforcement::bpf_lsm).restrictions(parse_policy(R"({"allowed_paths": ["/w"]})"), spec::Spec{})
              .path_mounts.empty());
}

TEST_CASE("landlock seccomp: escalation always, families and io_uring under allowed_hosts, xattrs under path rules, in enforce mode, on every ABI")
{
    auto names = [](const spec::Seccomp& filter) {
        std::vector<std::string> all;
        for (const auto& rule : filter.syscalls)
            all.insert(all.end(), rule.names.begin(), rule.names.end());
        return all;
    };
    auto has = [&](const spec::Seccomp& filter, const std::string& name) {
        auto all = names(filter);
        return std::find(all.begin(), all.end(), name) != all.end();
    };
    auto plain = landlock_seccomp(parse_policy(R"({"allowed_paths": ["/w"]})"), true, false);
    for (const char* name : {"bpf", "perf_event_open", "finit_module", "kexec_load", "unshare", "clone", "clone3"})
        CHECK(has(plain, name));
    int setns_rules = 0; // joining a user namespace, by its type or by no type at all
    for (const auto& rule : plain.syscalls)
        if (rule.names == std::vector<std::string>{"setns"} && rule.args.size() == 1 && rule.args[0].index == 1 &&
            rule.args[0].value == 0xffffffff && (rule.args[0].value_two == CLONE_NEWUSER || rule.args[0].value_two == 0))
            ++setns_rules;
    CHECK(setns_rules == 2);
    CHECK_FALSE(has(plain, "socket"));
    CHECK_FALSE(has(plain, "memfd_create"));
    for (const char* name : {"setxattr", "lsetxattr", "fsetxattr", "removexattr", "fremovexattr", "io_uring_setup"})
        CHECK(has(plain, name)); // Landlock has no right for xattrs
    auto no_paths = landlock_seccomp(parse_policy(R"({"allowed_hosts": []})"), true, false);
    CHECK_FALSE(has(no_paths, "setxattr"));
    CHECK_FALSE(has(landlock_seccomp(parse_policy(R"({"mode": "audit", "denied_paths": ["/s"]})"), true, false), "setxattr"));
    CHECK(has(landlock_seccomp(parse_policy(R"({"denied_paths": ["/s"]})"), true, false), "fsetxattr"));

    auto hosts = landlock_seccomp(parse_policy(R"({"allowed_hosts": [], "allowed_bins": ["/bin/sh"]})"), false, false);
    CHECK(has(hosts, "socket"));
    CHECK(has(hosts, "io_uring_setup"));
    CHECK(has(hosts, "memfd_create"));
    // Options that reroute packets, refused by level and name (their lower 32 bits: the kernel reads an int);
    // other setsockopt calls stay allowed.
    auto int_is = [](const spec::SeccompArg& arg, unsigned index, uint64_t value) {
        return arg.index == index && arg.op == "SCMP_CMP_MASKED_EQ" && arg.value == 0xffffffff && arg.value_two == value;
    };
    auto refused_option = [&](const spec::Seccomp& filter, uint64_t level, uint64_t optname) {
        for (const auto& rule : filter.syscalls)
            if (std::find(rule.names.begin(), rule.names.end(), "setsockopt") != rule.names.end() &&
                rule.args.size() == 2 && int_is(rule.args[0], 1, level) && int_is(rule.args[1], 2, optname))
                return true;
        return false;
    };
    // i386's socketcall: its socket and setsockopt refused whole, their arguments being out of seccomp's sight.
    auto refused_socketcall = [&](const spec::Seccomp& filter, uint64_t call) {
        for (const auto& rule : filter.syscalls)
            if (rule.names == std::vector<std::string>{"socketcall"} && rule.args.size() == 1 &&
                int_is(rule.args[0], 0, call))
                return true;
        return false;
    };
    CHECK(refused_socketcall(hosts, 1));
    CHECK(refused_socketcall(hosts, 14));
    CHECK_FALSE(refused_socketcall(hosts, 3)); // connect: judged by the socket programs
    CHECK_FALSE(refused_socketcall(plain, 1));
    for (const auto& rule : hosts.syscalls) // every comparison of an int argument ignores the upper bits
        if (rule.names == std::vector<std::string>{"socket"} && rule.args[0].op != "SCMP_CMP_GE")
            CHECK(int_is(rule.args[0], 0, rule.args[0].value_two));
    for (auto [level, optname] : {std::pair{IPPROTO_IP, IP_OPTIONS}, {IPPROTO_IP, IP_RETOPTS},
                                  {IPPROTO_IPV6, IPV6_RTHDR}, {IPPROTO_IPV6, IPV6_2292RTHDR},
                                  {IPPROTO_IPV6, IPV6_2292PKTOPTIONS}}) {
        CHECK(refused_option(hosts, level, optname));
        CHECK_FALSE(refused_option(plain, level, optname));
    }
    CHECK_FALSE(refused_option(hosts, IPPROTO_IP, IP_TTL));
    for (const auto& rule : hosts.syscalls) // no blanket rule on setsockopt
        if (std::find(rule.names.begin(), rule.names.end(), "setsockopt") != rule.names.end())
            CHECK(rule.args.size() == 2);
    CHECK_FALSE(has(landlock_seccomp(parse_policy(R"({"mode": "audit", "allowed_hosts": []})"), true, false), "socket"));
    CHECK_NOTHROW(seccomp::compile(hosts)); // libseccomp takes it, on every architecture listed
}

namespace {

// A backend that enforces everything and audits nothing: the refusal check's subject.
class EnforceOnly final : public Backend {
public:
    Enforcement kind() const override { return Enforcement::landlock; }
    Probe probe() const override { return {true, ""}; }
    std::vector<Coverage> coverage() const override
    {
        std::vector<Coverage> rows;
        for (auto kind : all_rule_kinds)
            rows.push_back({kind, Level::full, true, false, ""});
        return rows;
    }
    void adapt_spec(const Policy&, spec::Spec&, const std::string&) const override {}
    void install(const CompiledPolicy&, const ContainerCgroup&, const std::string&) const override {}
    void remove(const ContainerCgroup&, const std::string&) const override {}
    uint64_t path_seed() const override { return 0; }
    ProcessRestrictions restrictions(const Policy&, const spec::Spec&) const override { return {}; }
    void fill_restrictions(const Policy&, ProcessRestrictions&, int) const override {}
    void exempt_until_exec(pid_t, const ContainerCgroup&) const override {}
};

} // namespace

TEST_CASE("landlock audit mode: the calls each rule kind concerns are held for the collector; escalation stays refused")
{
    auto holds = [](const spec::Seccomp& filter, const std::string& name) {
        for (const auto& rule : filter.syscalls)
            if (std::find(rule.names.begin(), rule.names.end(), name) != rule.names.end())
                return rule.action == "SCMP_ACT_NOTIFY";
        return false;
    };
    auto refuses = [](const spec::Seccomp& filter, const std::string& name) {
        for (const auto& rule : filter.syscalls)
            if (std::find(rule.names.begin(), rule.names.end(), name) != rule.names.end())
                return rule.action == "SCMP_ACT_ERRNO";
        return false;
    };
    auto paths = landlock_audit_seccomp(parse_policy(R"({"mode": "audit", "allowed_paths": ["/w"]})"), false);
    for (const char* name : {"openat", "openat2", "execve", "unlinkat", "renameat2", "fchmodat", "setxattr", "mount"})
        CHECK_MESSAGE(holds(paths, name), name);
    auto enforce = landlock_seccomp(parse_policy(R"({"allowed_paths": ["/w"]})"), true, false);
    for (const char* name : {"bpf", "unshare", "keyctl", "userfaultfd"}) { // refused in both modes, alike
        CHECK_FALSE_MESSAGE(holds(paths, name), name);
        CHECK_MESSAGE(refuses(paths, name) == refuses(enforce, name), name);
        CHECK_MESSAGE(refuses(paths, name), name);
    }
    CHECK_FALSE(holds(paths, "socket")); // no allowed_hosts: sockets are not the policy's
    CHECK_FALSE(holds(paths, "mmap"));   // no allowed_bins
    for (const auto& rule : paths.syscalls) // what it refuses, enforce mode refuses too
        if (rule.action != "SCMP_ACT_NOTIFY")
            for (const auto& name : rule.names)
                CHECK_MESSAGE(refuses(enforce, name), name);
    auto hosts = landlock_audit_seccomp(parse_policy(R"({"mode": "audit", "allowed_hosts": [], "allowed_bins": ["/b"]})"), false);
    CHECK(holds(hosts, "socket"));
    CHECK(holds(hosts, "setsockopt"));
    CHECK(holds(hosts, "mmap"));
    CHECK(holds(hosts, "execve"));
    CHECK_FALSE(holds(hosts, "unlinkat")); // no path rules
    auto compiled = seccomp::compile(paths);
    CHECK(compiled.has_listener());
    // Audit mode mounts nothing and hides nothing; a Landlock domain only where the pid namespace is shared.
    auto audit = parse_policy(R"({"mode": "audit", "allowed_paths": ["/w"], "denied_paths": ["/w/s"]})");
    spec::Spec own_pids;
    own_pids.linux.emplace();
    own_pids.linux->namespaces = {{"pid", ""}};
    auto restrictions = backend(Enforcement::landlock).restrictions(audit, own_pids);
    CHECK_FALSE(restrictions.landlock_ruleset);
    REQUIRE(restrictions.path_mounts.size() == 1);
    CHECK(restrictions.path_mounts[0].kind == mounts::PathMount::Kind::sole_name);
    if (landlock::abi_version() >= landlock::signal_scope_abi) // the control: a shared pid namespace
        CHECK(backend(Enforcement::landlock).restrictions(audit, spec::Spec{}).landlock_ruleset);
}

TEST_CASE("coverage: a rule the backend cannot carry out is refused, naming it and the backend")
{
    EnforceOnly enforce_only;
    auto enforce_only_table = enforce_only.coverage();
    CHECK_NOTHROW(check_coverage(enforce_only, enforce_only_table,
                                 parse_policy(R"({"allowed_paths": ["/w"], "allowed_hosts": []})")));
    try {
        check_coverage(enforce_only, enforce_only_table, parse_policy(R"({"mode": "audit", "allowed_paths": ["/w"]})"));
        FAIL("audit of path rules accepted");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("policy.allowed_paths: the landlock backend cannot audit") == 0);
        CHECK(e.errnum() == EOPNOTSUPP);
    }
    // The landlock backend audits every kind: the calls are held for the audit collector.
    const Backend& landlock = backend(Enforcement::landlock);
    auto landlock_table = landlock.coverage();
    CHECK_NOTHROW(check_coverage(landlock, landlock_table, parse_policy(R"({"mode": "audit", "allowed_hosts": []})")));
    CHECK_NOTHROW(check_coverage(landlock, landlock_table, parse_policy(R"({"mode": "audit", "allowed_paths": ["/w"],
        "allowed_bins": ["/bin/sh"], "denied_paths": ["/w/s"], "forbidden_caps": ["CAP_CHOWN"]})")));
    // The BPF programs enforce, report and audit every kind whose hooks this kernel has (as built for);
    // the others say which function they lack (test_bpf_hooks.cpp: which kinds, on which kernels).
    for (auto e : {Enforcement::bpf_lsm, Enforcement::fmod_ret})
        for (const auto& row : backend(e).coverage()) {
            CAPTURE(rule_kind_name(row.kind));
            bool full = row.enforced == Level::full;
            CHECK(row.reported == full);
            CHECK(row.audit_mode == full);
            CHECK(row.note.empty() == full);
        }
    for (auto kind : all_rule_kinds) // every backend answers for every rule kind
        for (auto e : {Enforcement::bpf_lsm, Enforcement::fmod_ret, Enforcement::landlock}) {
            auto table = backend(e).coverage();
            CHECK(std::any_of(table.begin(), table.end(), [&](const Coverage& row) { return row.kind == kind; }));
        }
}

TEST_CASE("enforcement: a minimum in the policy, which --lock-policy may only raise")
{
    CHECK(parse_policy(R"({"enforcement": "bpf-lsm"})").enforcement == Enforcement::bpf_lsm);
    CHECK(parse_policy("{}").enforcement == Enforcement::automatic);
    CHECK_THROWS_WITH_AS(parse_policy(R"({"enforcement": "selinux"})"), doctest::Contains("policy.enforcement"),
                         Error);
    auto base = parse_policy(R"({"enforcement": "fmod-ret"})");
    CHECK(narrow_policy(base, parse_policy("{}")).enforcement == Enforcement::fmod_ret);
    CHECK(narrow_policy(base, parse_policy(R"({"enforcement": "bpf-lsm"})")).enforcement == Enforcement::bpf_lsm);
    CHECK_THROWS_WITH_AS(narrow_policy(base, parse_policy(R"({"enforcement": "landlock"})")),
                         doctest::Contains("widens the locked default"), Error);
    CHECK_THROWS_WITH_AS(choose_backend(Enforcement::landlock, base), doctest::Contains("demands at least"), Error);
}

TEST_CASE("compiled once: the entries are keyed by the cgroup afterwards")
{
    auto policy = parse_policy(R"({"allowed_hosts": ["192.0.2.0/24:443", "[2001:db8::1]:443"],
                                   "allowed_paths": ["/w"]})");
    auto compiled = compile_policy(policy, 0, 7);
    assign_cgroup(compiled, 0x1122334455667788ULL);
    auto direct = compile_policy(policy, 0x1122334455667788ULL, 7);
    REQUIRE(compiled.net4.size() == direct.net4.size());
    CHECK(std::memcmp(&compiled.net4[0].key, &direct.net4[0].key, sizeof(cerb_net4_key)) == 0);
    CHECK(std::memcmp(&compiled.net6[0].key, &direct.net6[0].key, sizeof(cerb_net6_key)) == 0);
    CHECK(compiled.paths[0].key.cgroup_id == direct.paths[0].key.cgroup_id);
    CHECK(compiled.cgroup_id == direct.cgroup_id);
}

TEST_CASE("landlock mounts: the writable directories between a kept path and the mount above it are pinned")
{
    using Kind = mounts::PathMount::Kind;
    auto pinned = [](const char* json) {
        std::vector<std::string> dirs;
        for (const auto& m : landlock_path_mounts(parse_policy(json), false))
            if (m.kind == Kind::pinned)
                dirs.push_back(m.path);
        return dirs;
    };
    // The denied file's directory, and every directory up to the writable mount, parents first.
    CHECK(pinned(R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/"],
                    "denied_paths": ["/workspace/.git/config", "/workspace/a/b/secret"]})") ==
          std::vector<std::string>{"/workspace/a", "/workspace/a/b", "/workspace/.git"}); // by length
    // A read-only entry nested in a writable one; its read-only parents need nothing (EROFS).
    CHECK(pinned(R"({"allowed_paths": ["/w"], "read_only_paths": ["/w/p/ro", "/w/q"], "denied_paths": ["/w/q/r/s"]})") ==
          std::vector<std::string>{"/w/p"});
    // Denied paths alone: everything is writable, up to the root.
    CHECK(pinned(R"({"denied_paths": ["/home/u/.ssh/id"]})") == std::vector<std::string>{"/home", "/home/u", "/home/u/.ssh"});
    // Outside every list Landlock grants no right to rename anything.
    CHECK(pinned(R"({"allowed_paths": ["/w"], "denied_paths": ["/etc/x/shadow"]})").empty());
    CHECK(pinned(R"({"allowed_hosts": []})").empty());
}

TEST_CASE("landlock seccomp: keyrings and userfaultfd under every policy; calls on other processes by number in a shared pid namespace")
{
    auto rules_for = [](const spec::Seccomp& filter, const std::string& name) {
        std::vector<spec::SeccompSyscall> found;
        for (const auto& rule : filter.syscalls)
            if (std::find(rule.names.begin(), rule.names.end(), name) != rule.names.end())
                found.push_back(rule);
        return found;
    };
    auto own = landlock_seccomp(parse_policy(R"({"allowed_hosts": []})"), true, false);
    for (const char* name : {"keyctl", "add_key", "request_key", "userfaultfd"})
        CHECK(rules_for(own, name).size() == 1);
    auto ioctl = rules_for(own, "ioctl");
    REQUIRE(ioctl.size() == 1); // only /dev/userfaultfd's request
    CHECK(ioctl[0].args.size() == 1);
    CHECK(ioctl[0].args[0].value_two == 0xaa00);
    CHECK(rules_for(own, "prlimit64").empty()); // its own pid namespace: nothing outside has a number

    auto shared = landlock_seccomp(parse_policy(R"({"allowed_hosts": []})"), true, true);
    for (const char* name : {"prlimit64", "sched_setaffinity", "sched_setscheduler", "move_pages"}) {
        auto rules = rules_for(shared, name);
        REQUIRE(rules.size() == 1);
        CHECK(rules[0].args[0].index == 0);
        CHECK(rules[0].args[0].op == "SCMP_CMP_NE"); // any pid but the caller's own (0)
    }
    CHECK(rules_for(shared, "setpriority").size() == 2); // a group or a user, or another process
    CHECK(rules_for(shared, "ioprio_set").size() == 2);
    CHECK_NOTHROW(seccomp::compile(shared));
}

TEST_CASE("landlock: a container sharing a pid namespace gets a domain of its own, signals scoped, from ABI 6")
{
    auto plan = landlock::plan_ruleset(parse_policy(R"({"allowed_hosts": []})"), 6);
    CHECK_FALSE(plan.wanted()); // no file rule: no domain of its own pid namespace needs
    CHECK(landlock::confine_to_domain(plan, 6));
    CHECK(plan.wanted());
    CHECK(plan.handled == 0);
    CHECK(plan.scoped == 2); // LANDLOCK_SCOPE_SIGNAL
    auto old = landlock::plan_ruleset(parse_policy(R"({"allowed_paths": ["/w"]})"), 5);
    CHECK_FALSE(landlock::confine_to_domain(old, 5)); // create refuses the container there
    CHECK(old.scoped == 0);
}
