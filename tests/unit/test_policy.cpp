// SPDX-License-Identifier: Apache-2.0
#include "base/error.hpp"
#include "policy/policy.hpp"
#include "rootfs/paths.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

using namespace cerberus;
using namespace cerberus::policy;

namespace {

std::string error_of(const std::string& json)
{
    try {
        parse_policy(json);
    } catch (const Error& e) {
        CHECK(e.errnum() == EINVAL);
        return e.what();
    }
    return "no error";
}

Cidr address(const char* text)
{
    Cidr out;
    out.family = std::string(text).find(':') == std::string::npos ? AF_INET : AF_INET6;
    out.prefix = out.family == AF_INET ? 32 : 128;
    REQUIRE(inet_pton(out.family, text, out.addr.data()) == 1);
    return out;
}

struct PolicyDir : TempDir {
    std::string write(const std::string& name, const std::string& text) const
    {
        std::ofstream(path + "/" + name) << text;
        return path + "/" + name;
    }
};

} // namespace

TEST_CASE("policy: the issue's example parses")
{
    auto p = parse_policy(R"({
      "mode": "enforce",
      "allowed_hosts": ["1.1.1.1:443", "10.20.0.0/16", "[2001:db8::1]:443", "2001:db8:1::/48", "example.org:443"],
      "allowed_paths": ["/workspace", "/tmp/"],
      "read_only_paths": ["/usr", "/lib", "/bin", "/etc"],
      "denied_paths": ["/etc/shadow", "/workspace/.git/config"],
      "allowed_bins": ["/usr/bin/python3", "/bin/sh"],
      "forbidden_caps": ["CAP_SYS_ADMIN", "cap_net_raw"]
    })");
    CHECK(p.mode == Mode::enforce);
    REQUIRE(p.allowed_hosts->size() == 5);
    CHECK((*p.allowed_hosts)[0].network == address("1.1.1.1"));
    CHECK((*p.allowed_hosts)[0].ports == PortRange{443, 443});
    CHECK((*p.allowed_hosts)[1].network->prefix == 16);
    CHECK((*p.allowed_hosts)[1].ports == PortRange{0, 65535});
    CHECK((*p.allowed_hosts)[2].network == address("2001:db8::1"));
    CHECK((*p.allowed_hosts)[3].network->prefix == 48);
    CHECK((*p.allowed_hosts)[4].host_name == "example.org");
    CHECK((*p.allowed_paths)[1] == "/tmp");
    CHECK(p.forbidden_caps == std::vector<int>{13, 21}); // CAP_NET_RAW, CAP_SYS_ADMIN
    CHECK(capability_number("cap_sys_admin") == 21);
}

TEST_CASE("policy: absent lists do not restrict, empty ones allow nothing")
{
    auto p = parse_policy(R"({"allowed_hosts": [], "mode": "audit"})");
    CHECK(p.mode == Mode::audit);
    CHECK(p.allowed_hosts->empty());
    CHECK_FALSE(p.allowed_paths);
    CHECK_FALSE(p.restricts_paths());
}

TEST_CASE("policy: errors name the field and the value")
{
    CHECK(error_of(R"({"allowed_hosts": ["1.1.1.1", "::1", "10.0.0.0/33"]})") ==
          R"(policy.allowed_hosts[2]: bad CIDR "10.0.0.0/33")");
    CHECK(error_of(R"({"allowed_hosts": ["10.0.0.1/8"]})") ==
          R"(policy.allowed_hosts[0]: bad CIDR (host bits set) "10.0.0.1/8")");
    CHECK(error_of(R"({"allowed_hosts": ["2001:db8::/129"]})") ==
          R"(policy.allowed_hosts[0]: bad CIDR "2001:db8::/129")");
    CHECK(error_of(R"({"allowed_hosts": ["1.1.1.1:0"]})") ==
          R"(policy.allowed_hosts[0]: bad port or port range "1.1.1.1:0")");
    CHECK(error_of(R"({"allowed_hosts": ["10.0.0.0/8:2000-1000"]})") ==
          R"(policy.allowed_hosts[0]: bad port or port range "10.0.0.0/8:2000-1000")");
    CHECK(error_of(R"({"allowed_hosts": ["[2001:db8::1]443"]})") ==
          R"(policy.allowed_hosts[0]: expected ":PORT" after "]" in "[2001:db8::1]443")");
    CHECK(error_of(R"({"allowed_hosts": ["bad host!"]})") ==
          R"(policy.allowed_hosts[0]: bad character in host name "bad host!")");
    CHECK(error_of(R"({"allowed_hosts": "1.1.1.1"})") ==
          R"(policy.allowed_hosts: expected an array, got string "1.1.1.1")");
    CHECK(error_of(R"({"allowed_paths": ["/ok", 3]})") == "policy.allowed_paths[1]: expected a string, got number 3");
    CHECK(error_of(R"({"allowed_paths": ["tmp"]})") == R"(policy.allowed_paths[0]: path "tmp" is not absolute)");
    CHECK(error_of(R"({"denied_paths": ["/a/../etc"]})") ==
          R"(policy.denied_paths[0]: path "/a/../etc" has a ".." component)");
    CHECK(error_of(R"({"forbidden_caps": ["CAP_SYS_ADMIN", "CAP_FLY"]})") ==
          R"(policy.forbidden_caps[1]: unknown capability "CAP_FLY")");
    CHECK(error_of(R"({"forbidden_caps": ["SYS_ADMIN"]})") ==
          R"(policy.forbidden_caps[0]: unknown capability "SYS_ADMIN")");
    CHECK(error_of(R"({"mode": "permissive"})") ==
          R"(policy.mode: unknown mode "permissive" (expected "enforce" or "audit"))");
    CHECK(error_of(R"({"allowed_bins": ["/bin/sh", "/lib64/ld-linux-x86-64.so.2"]})") ==
          R"(policy.allowed_bins[1]: "/lib64/ld-linux-x86-64.so.2" is the dynamic loader, which would run any file; )"
          "dynamically linked programs run without listing it");
    CHECK(error_of(R"({"allowed_bins": ["/lib/ld-musl-x86_64.so.1"]})").find("dynamic loader") != std::string::npos);
    CHECK(error_of(R"({"allowed_bins": ["/usr/bin/ldd"]})") == "no error");
    CHECK(error_of(R"({"allowed_host": []})") == R"(policy: unknown field "allowed_host")");
    CHECK(error_of("[1]") == "policy: expected an object, got array [1]");
    CHECK(error_of("{").rfind("policy: invalid JSON", 0) == 0);
    // Found by tests/fuzz (target policy): a number too large to hold escaped as nlohmann's own exception.
    CHECK(error_of(R"({"mode": 2)" + std::string(400, '2') + "}").rfind("policy: invalid JSON", 0) == 0);
    CHECK(error_of(R"({"mode": 7.9E9200})").rfind("policy: invalid JSON", 0) == 0);
}

TEST_CASE("policy: host rule forms")
{
    auto range = parse_host_rule("10.0.0.0/8:1000-2000", "f");
    CHECK(range.network->prefix == 8);
    CHECK(range.ports == PortRange{1000, 2000});
    auto v6net = parse_host_rule("[2001:db8::/32]:443", "f");
    CHECK(v6net.network->prefix == 32);
    CHECK(v6net.ports.first == 443);
    auto name = parse_host_rule("api.example.org:8000-8080", "f");
    CHECK(name.host_name == "api.example.org");
    CHECK(name.ports == PortRange{8000, 8080});
    CHECK(parse_host_rule("::1", "f").network == address("::1"));
}

TEST_CASE("policy: paths are matched by whole components")
{
    CHECK(normalize_policy_path("//workspace//x/", "f") == "/workspace/x");
    CHECK(normalize_policy_path("/", "f") == "/");
    CHECK(paths::within("/tmp/a", "/tmp"));
    CHECK(paths::within("/tmp", "/tmp"));
    CHECK_FALSE(paths::within("/tmpfoo", "/tmp"));
    CHECK(paths::within("/anything", "/"));
}

TEST_CASE("policy: --lock-policy keeps the lists an annotation leaves out")
{
    auto base = parse_policy(R"({
      "allowed_hosts": ["10.0.0.0/8:1000-2000", "example.org:443", "[2606:2800:220:1::1]:443"],
      "allowed_paths": ["/workspace"], "read_only_paths": ["/usr"],
      "denied_paths": ["/etc/shadow"], "allowed_bins": ["/usr/bin/python3"]})");
    auto kept = narrow_policy(base, parse_policy("{}"));
    CHECK(kept.allowed_hosts->size() == 3);
    CHECK(*kept.allowed_paths == std::vector<std::string>{"/workspace"});
    CHECK(*kept.read_only_paths == std::vector<std::string>{"/usr"});
    CHECK(kept.denied_paths == std::vector<std::string>{"/etc/shadow"});
    CHECK(*kept.allowed_bins == std::vector<std::string>{"/usr/bin/python3"});
    auto p = narrow_policy(base, parse_policy(R"({"allowed_hosts": ["[2606:2800:220:1::1]:443"],
        "allowed_paths": ["/workspace/src"], "denied_paths": ["/workspace/.git"]})"));
    CHECK(p.allowed_hosts->size() == 1);
    CHECK(*p.allowed_paths == std::vector<std::string>{"/workspace/src"});
    CHECK_FALSE(p.read_only_paths);
    CHECK(p.denied_paths == std::vector<std::string>{"/workspace/.git", "/etc/shadow"});
}

TEST_CASE("policy: a key given twice is refused, naming it")
{
    CHECK(error_of(R"({"denied_paths": ["/etc/shadow"], "denied_paths": []})") ==
          R"(policy: duplicate key "denied_paths")");
    CHECK(error_of(R"({"mode": "enforce", "allowed_paths": ["/w"], "mode": "audit"})") ==
          R"(policy: duplicate key "mode")");
    // Anywhere in the document, not only at the top (then refused as unknown).
    CHECK(error_of(R"({"x": [{"a": 1, "a": 2}]})") == R"(policy: duplicate key "a")");
    CHECK(error_of(R"({"x": [{"a": 1}, {"a": 2}]})") == R"(policy: unknown field "x")"); // control: distinct objects
    // Controls: the same documents without the second key.
    CHECK(error_of(R"({"denied_paths": ["/etc/shadow"]})") == "no error");
    CHECK(error_of(R"({"mode": "enforce", "allowed_paths": ["/w"]})") == "no error");
}

TEST_CASE("policy: an allowed_bins entry the agent could rewrite is refused, naming it")
{
    CHECK(error_of(R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr"],
                       "allowed_bins": ["/usr/bin/python3", "/workspace/tool"]})") ==
          R"(policy.allowed_bins[1]: "/workspace/tool" is writable (policy.allowed_paths[0] "/workspace"), so the )"
          "agent could replace it and run anything; list it, or a directory above it, in read_only_paths");
    CHECK(error_of(R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/usr"],
                       "allowed_bins": ["/usr/bin/python3"]})") == "no error");
    // The most specific rule decides: read-only inside a writable tree is fine, and the reverse is not.
    CHECK(error_of(R"({"allowed_paths": ["/workspace"], "read_only_paths": ["/workspace/bin"],
                       "allowed_bins": ["/workspace/bin/tool"]})") == "no error");
    CHECK(error_of(R"({"allowed_paths": ["/opt/tools"], "read_only_paths": ["/"],
                       "allowed_bins": ["/opt/tools/run"]})")
              .find("policy.allowed_bins[0]: \"/opt/tools/run\" is writable") != std::string::npos);
    // Listed in allowed_paths too: writable, as the kernel side has it.
    CHECK(error_of(R"({"allowed_paths": ["/opt"], "read_only_paths": ["/opt"], "allowed_bins": ["/opt/x"]})") !=
          "no error");
    // The binary itself listed as an allowed path.
    CHECK(error_of(R"({"allowed_paths": ["/bin/sh"], "allowed_bins": ["/bin/sh"]})") != "no error");
    // Without path rules the policy does not govern writes (docs/policy.md says so).
    CHECK(error_of(R"({"allowed_bins": ["/bin/sh"]})") == "no error");
}

TEST_CASE("policy: a pod's annotation for one container, by the name the engine gives it, over the pod-wide one")
{
    PolicyDir dir;
    PolicySources sources{.policy_dir = dir.path};
    dir.write("web.json", R"({"allowed_hosts": ["web.example:443"]})");
    std::map<std::string, std::string> pod = {
        {"io.cerberus.policy", R"({"allowed_hosts": ["pod.example:443"]})"},
        {"io.cerberus.policy/agent", R"({"allowed_hosts": ["agent.example:443"]})"},
        {"io.cerberus.policy.profile/sidecar", "web"}};
    auto host_of = [&](std::map<std::string, std::string> annotations) {
        return (*resolve_policy(annotations, sources)->allowed_hosts)[0].host_name;
    };
    auto with = [&](const char* key, const char* name) {
        auto annotations = pod;
        annotations[key] = name;
        return annotations;
    };
    CHECK(host_of(with("io.kubernetes.cri.container-name", "agent")) == "agent.example");
    CHECK(host_of(with("io.kubernetes.container.name", "agent")) == "agent.example"); // CRI-O's and Podman's key
    CHECK(host_of(with("io.kubernetes.cri.container-name", "sidecar")) == "web.example");
    // Controls: a container the pod names no policy for, and the sandbox (no container name), get the pod's.
    CHECK(host_of(with("io.kubernetes.cri.container-name", "logger")) == "pod.example");
    CHECK(host_of(pod) == "pod.example");
    auto both = with("io.kubernetes.cri.container-name", "agent");
    both["io.cerberus.policy.profile/agent"] = "web";
    CHECK_THROWS_WITH(resolve_policy(both, sources), "annotations io.cerberus.policy/agent and "
                                                     "io.cerberus.policy.profile/agent are mutually exclusive");
    auto bad = with("io.kubernetes.cri.container-name", "agent");
    bad["io.cerberus.policy/agent"] = R"({"allowed_paths": ["x"]})";
    CHECK_THROWS_WITH(resolve_policy(bad, sources),
                      R"(annotation io.cerberus.policy/agent: policy.allowed_paths[0]: path "x" is not absolute)");
}

TEST_CASE("policy: sources")
{
    PolicyDir dir;
    PolicySources sources{.policy_dir = dir.path};
    dir.write("web.json", R"({"allowed_hosts": ["1.1.1.1:443"]})");

    CHECK_FALSE(resolve_policy({}, sources));
    auto inline_policy = resolve_policy({{inline_annotation, R"({"mode": "audit"})"}}, sources);
    REQUIRE(inline_policy);
    CHECK(inline_policy->mode == Mode::audit);
    auto profile = resolve_policy({{profile_annotation, "web"}}, sources);
    REQUIRE(profile);
    CHECK(profile->allowed_hosts->size() == 1);

    CHECK_THROWS_WITH(resolve_policy({{profile_annotation, "../web"}}, sources),
                      R"(annotation io.cerberus.policy.profile: bad profile name "../web" (a plain name, without "/" or ".."))");
    CHECK_THROWS_WITH(resolve_policy({{inline_annotation, R"({"allowed_paths": ["x"]})"}}, sources),
                      R"(annotation io.cerberus.policy: policy.allowed_paths[0]: path "x" is not absolute)");
    CHECK_THROWS_AS(resolve_policy({{profile_annotation, "missing"}}, sources), Error);
    CHECK_THROWS_WITH(resolve_policy({{inline_annotation, "{}"}, {profile_annotation, "web"}}, sources),
                      "annotations io.cerberus.policy and io.cerberus.policy.profile are mutually exclusive");

    sources.default_policy_file = dir.write("default.json", R"({"allowed_hosts": ["example.org:443"]})");
    auto fallback = resolve_policy({}, sources);
    REQUIRE(fallback);
    CHECK((*fallback->allowed_hosts)[0].host_name == "example.org"); // kept as a name: the DNS gate resolves it
    CHECK(resolve_policy({{profile_annotation, "web"}}, sources)->allowed_hosts->size() == 1); // not locked
    sources.lock = true;
    CHECK_THROWS_WITH(resolve_policy({{profile_annotation, "web"}}, sources),
                      R"(--lock-policy: policy.allowed_hosts[0]: "1.1.1.1:443" widens the locked default policy)");
}

TEST_CASE("policy: what it forces, applied to a process")
{
    spec::Spec spec;
    spec.process.emplace();
    spec.process->capabilities = spec::Capabilities{
        .bounding = {"CAP_SYS_ADMIN", "CAP_KILL"}, .effective = {"CAP_SYS_ADMIN"}, .inheritable = {"CAP_NET_RAW"},
        .permitted = {"CAP_SYS_ADMIN", "CAP_NET_RAW", "CAP_KILL"}, .ambient = {"CAP_SYS_ADMIN"}};
    forced_on_processes(parse_policy(R"({"forbidden_caps": ["CAP_SYS_ADMIN", "CAP_NET_RAW"]})")).apply_to(*spec.process);
    CHECK(spec.process->no_new_privileges);
    const auto& caps = *spec.process->capabilities;
    CHECK(caps.bounding == std::vector<std::string>{"CAP_KILL"});
    CHECK(caps.effective.empty());
    CHECK(caps.inheritable.empty());
    CHECK(caps.permitted == std::vector<std::string>{"CAP_KILL"});
    CHECK(caps.ambient.empty());
}

TEST_CASE("policy: a default variable is added to a process that does not set it, never over one that does")
{
    spec::Process process;
    process.env = {"PATH=/bin", "REQUESTS_CA_BUNDLE=/own.pem"};
    launch::ProcessConstraints forced{.default_env = {"REQUESTS_CA_BUNDLE=/etc/ssl/cert.pem", "GH_TOKEN=placeholder"}};
    forced.apply_to(process);
    CHECK(process.env == std::vector<std::string>{"PATH=/bin", "REQUESTS_CA_BUNDLE=/own.pem", "GH_TOKEN=placeholder"});
    forced.apply_to(process); // twice: once at create, once more where exec applies the state's
    CHECK(process.env.size() == 3);
}

TEST_CASE("policy: required of a config the caller cannot change (an OCI hook's), naming the field")
{
    spec::Spec spec;
    spec.process.emplace();
    spec.process->capabilities = spec::Capabilities{.bounding = {"CAP_KILL", "CAP_NET_RAW"}, .permitted = {"CAP_KILL"}};
    auto policy = parse_policy(R"({"forbidden_caps": ["CAP_NET_RAW"]})");

    // noNewPrivileges first: a policy always needs it.
    CHECK_THROWS_WITH(require_policy_applied(policy, spec), "process.noNewPrivileges: false, and a policy needs it true");
    spec.process->no_new_privileges = true;
    CHECK_THROWS_WITH(require_policy_applied(policy, spec),
                      "process.capabilities.bounding: CAP_NET_RAW is in policy.forbidden_caps");
    // The control: the same config once what the policy forces is applied.
    forced_on_processes(policy).apply_to(*spec.process);
    CHECK_NOTHROW(require_policy_applied(policy, spec));
    CHECK_NOTHROW(require_policy_applied(parse_policy(R"({"allowed_hosts": ["192.0.2.1:443"]})"), spec));
}
