// SPDX-License-Identifier: Apache-2.0
// The landlock backend's observed calls judged against a policy: a temporary
// directory stands in for the container's root.
#include "audit/audit_format.hpp"
#include "cerberus_calls.h"
#include "policy/observed_calls.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

using namespace cerberus;

namespace {

const char* const policy_text = R"({"allowed_paths": ["/workspace", "/tmp"], "read_only_paths": ["/bin", "/etc"],
    "denied_paths": ["/workspace/secret"], "allowed_bins": ["/bin/sh"], "allowed_hosts": ["192.0.2.1:443"]})";

void set(char (&field)[CERB_CALL_NAME], const std::string& text)
{
    std::memset(field, 0, sizeof(field));
    std::memcpy(field, text.data(), std::min(text.size(), sizeof(field) - 1));
}

cerb_call_event call(uint32_t nr, int err, const std::string& path, const std::string& dir = "",
                     std::initializer_list<uint64_t> args = {})
{
    cerb_call_event c{};
    c.pid = 4242;
    c.tid = 4242;
    std::strcpy(c.comm, "agent");
    c.nr = nr;
    c.err = err;
    int i = 0;
    for (uint64_t a : args)
        c.args[i++] = a;
    set(c.names[0].path, path);
    set(c.names[0].dir, dir);
    return c;
}

struct Root {
    TempDir dir;
    cerberus::UniqueFd fd;
    Root()
    {
        for (const char* d : {"/workspace/sub", "/data", "/bin", "/etc", "/tmp"})
            std::filesystem::create_directories(dir.path + d);
        std::ofstream(dir.path + "/data/outside") << "x";
        std::ofstream(dir.path + "/workspace/ok") << "x";
        std::ofstream(dir.path + "/bin/tool") << "x";
        std::filesystem::create_symlink("/data/outside", dir.path + "/workspace/link");
        std::filesystem::create_symlink("../../data", dir.path + "/workspace/sub/up");
        fd.reset(::open(dir.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        REQUIRE(fd);
    }
};

std::string line_of(const std::optional<cerb_event>& e)
{
    REQUIRE(e);
    auto j = audit::event_json(*e, {"c1", "", 0});
    return j["op"].get<std::string>() + " " + j["target"].get<std::string>() + " " + j["error"].get<std::string>() +
           " (" + j["rule"].get<std::string>() + ")" + (j.contains("access") ? " " + j["access"].get<std::string>() : "");
}

} // namespace

// Calls newer than Debian 12's headers: what Linux numbered them.
#ifndef __NR_fchmodat2
#define __NR_fchmodat2 452
#endif
#ifndef __NR_setxattrat
#define __NR_setxattrat 463
#endif
#ifndef __NR_removexattrat
#define __NR_removexattrat 466
#endif

TEST_CASE("observed calls: the numbers are the C library's")
{
#define CHECK_NUMBER(name, number, d0, p0, d1, p1) CHECK_MESSAGE(number == __NR_##name, #name);
    CERB_CALLS(CHECK_NUMBER)
#undef CHECK_NUMBER
    CHECK(CERB_NR_EXECVE == __NR_execve);
    CHECK(CERB_NR_EXECVEAT == __NR_execveat);
    CHECK(CERB_NR_OPENAT2 == __NR_openat2);
}

TEST_CASE("observed calls: opens judged as the BPF LSM judges them, the path resolved in the container's root")
{
    Root root;
    policy::Policy p = policy::parse_policy(policy_text);
    int r = root.fd.get();
    CHECK(line_of(policy::judge_call(p, call(__NR_openat, EACCES, "/data/outside", "", {uint64_t(-100), 0, O_RDONLY}), r,
                                     CERB_VERDICT_DENIED)) == "open /data/outside EACCES (not in allowed_paths) read");
    // A symlink in an allowed path to a file outside: the file is what the kernel judged.
    CHECK(line_of(policy::judge_call(p, call(__NR_openat, EACCES, "link", "/workspace", {uint64_t(-100), 0, O_RDONLY}),
                                     r, CERB_VERDICT_DENIED)) == "open /data/outside EACCES (not in allowed_paths) read");
    CHECK(line_of(policy::judge_call(p, call(__NR_openat, EACCES, "sub/up/outside", "/workspace",
                                             {uint64_t(-100), 0, O_RDONLY}),
                                     r, CERB_VERDICT_DENIED)) == "open /data/outside EACCES (not in allowed_paths) read");
    CHECK(line_of(policy::judge_call(p, call(__NR_open, EROFS, "/etc/passwd", "", {0, O_WRONLY}), r,
                                     CERB_VERDICT_DENIED)) == "open /etc/passwd EROFS (read_only_paths /etc) write");
    CHECK(line_of(policy::judge_call(p, call(__NR_openat, EACCES, "/workspace/secret", "", {uint64_t(-100), 0, O_RDONLY}),
                                     r, CERB_VERDICT_DENIED)) ==
          "open /workspace/secret EACCES (denied_paths /workspace/secret) read");
    // A new file: created, not opened.
    CHECK(line_of(policy::judge_call(p, call(__NR_creat, EACCES, "/data/new"), r, CERB_VERDICT_DENIED)) ==
          "create /data/new EACCES (not in allowed_paths)");
    // The control: failures the policy did not make (file permissions in an allowed path) are no refusal.
    CHECK_FALSE(policy::judge_call(p, call(__NR_openat, EACCES, "/workspace/ok", "", {uint64_t(-100), 0, O_RDWR}), r,
                                   CERB_VERDICT_DENIED));
    CHECK_FALSE(policy::judge_call(p, call(__NR_openat, EACCES, "/data", "", {uint64_t(-100), 0, O_PATH}), r,
                                   CERB_VERDICT_DENIED));
}

TEST_CASE("observed calls: exec, changes, seccomp's refusals and capabilities")
{
    Root root;
    policy::Policy p = policy::parse_policy(policy_text);
    int r = root.fd.get();
    CHECK(line_of(policy::judge_call(p, call(__NR_execve, EACCES, "/bin/tool"), r, CERB_VERDICT_DENIED)) ==
          "exec /bin/tool EACCES (not in allowed_bins)");
    CHECK_FALSE(policy::judge_call(p, call(__NR_execve, EACCES, "/bin/sh"), r, CERB_VERDICT_DENIED));
    CHECK(line_of(policy::judge_call(p, call(__NR_unlinkat, EACCES, "/etc/x", "", {uint64_t(-100), 0, 0}), r,
                                     CERB_VERDICT_DENIED)) == "unlink /etc/x EACCES (read_only_paths /etc)");
    cerb_call_event rename = call(__NR_rename, EXDEV, "/data/outside");
    set(rename.names[1].path, "/workspace/moved");
    CHECK(line_of(policy::judge_call(p, rename, r, CERB_VERDICT_DENIED)) ==
          "rename /data/outside EXDEV (not in allowed_paths)");
    CHECK(line_of(policy::judge_call(p, call(__NR_setxattr, EPERM, "/workspace/ok"), r, CERB_VERDICT_DENIED)) ==
          "xattr /workspace/ok EPERM (xattrs are refused under path rules)");
    CHECK(line_of(policy::judge_call(p, call(__NR_bpf, EPERM, "", "", {5}), r, CERB_VERDICT_DENIED)) ==
          "bpf cmd=5 EPERM (escalation is shut under a policy)");
    CHECK(line_of(policy::judge_call(p, call(__NR_unshare, EPERM, "", "", {CLONE_NEWUSER}), r, CERB_VERDICT_DENIED)) ==
          "userns  EPERM (escalation is shut under a policy)");
    CHECK_FALSE(policy::judge_call(p, call(__NR_unshare, EPERM, "", "", {CLONE_NEWNS}), r, CERB_VERDICT_DENIED));
    CHECK(line_of(policy::judge_call(p, call(__NR_socket, EPERM, "", "", {17, 3, 0}), r, CERB_VERDICT_DENIED)) ==
          "socket family=17 type=3 EPERM (address family not allowed)");
    CHECK_FALSE(policy::judge_call(p, call(__NR_socket, EPERM, "", "", {2, 3, 1}), r, CERB_VERDICT_DENIED));
    CHECK(line_of(policy::judge_call(p, call(__NR_mount, EPERM, "/tmp"), r, CERB_VERDICT_DENIED)) ==
          "mount  EPERM (escalation is shut under a policy)");
    cerb_call_event cap = call(__NR_socket, EPERM, "", "", {2, 3, 1});
    cap.flags = CERB_CALL_CAPABILITY;
    cap.cap = 13; // CAP_NET_RAW
    CHECK(line_of(policy::judge_call(p, cap, r, CERB_VERDICT_DENIED)) ==
          "capability CAP_NET_RAW EPERM (forbidden_caps CAP_NET_RAW)");
}

TEST_CASE("observed calls: audit mode records what enforce would refuse, with its errno")
{
    Root root;
    policy::Policy p = policy::parse_policy(policy_text);
    auto e = policy::judge_call(p, call(__NR_openat, 0, "/data/outside", "", {uint64_t(-100), 0, O_RDONLY}),
                                root.fd.get(), CERB_VERDICT_AUDIT);
    REQUIRE(e);
    auto j = audit::event_json(*e, {"c1", "", 0});
    CHECK(j["verdict"] == "audit");
    CHECK(j["errno"] == 13);
    CHECK_FALSE(policy::judge_call(p, call(__NR_openat, 0, "/workspace/ok", "", {uint64_t(-100), 0, O_RDWR}),
                                   root.fd.get(), CERB_VERDICT_AUDIT));
}

TEST_CASE("observed calls: every refusal is judged, whatever the audit state; Landlock's own are told apart")
{
    // The kernel audit log may carry a record of Landlock's refusals too: the collector pairs the two
    // (one line a denial), so the judge never leaves one out.
    Root root;
    policy::Policy p = policy::parse_policy(policy_text);
    cerb_call_event landlock = call(__NR_openat, EACCES, "/data/outside", "", {uint64_t(-100), 0, O_RDONLY});
    auto e = policy::judge_call(p, landlock, root.fd.get(), CERB_VERDICT_DENIED);
    REQUIRE(e);
    CHECK(audit::refused_by_landlock(landlock, *e));
    // The cover over a denied path refuses by its file mode, a read-only mount with EROFS: not Landlock.
    cerb_call_event cover = call(__NR_openat, EACCES, "/workspace/secret", "", {uint64_t(-100), 0, O_RDONLY});
    e = policy::judge_call(p, cover, root.fd.get(), CERB_VERDICT_DENIED);
    REQUIRE(e);
    CHECK_FALSE(audit::refused_by_landlock(cover, *e));
    cerb_call_event mount = call(__NR_openat, EROFS, "/etc/passwd", "", {uint64_t(-100), 0, O_WRONLY});
    e = policy::judge_call(p, mount, root.fd.get(), CERB_VERDICT_DENIED);
    REQUIRE(e);
    CHECK_FALSE(audit::refused_by_landlock(mount, *e));
}

TEST_CASE("observed calls: names resolve in the root and never out of it")
{
    Root root;
    cerb_call_name name{};
    set(name.path, "../../../../data/outside");
    set(name.dir, "/workspace");
    auto resolved = policy::resolve_name(root.fd.get(), name, true);
    CHECK(resolved.path.find("/data/outside") != std::string::npos);
    CHECK(resolved.resolved);
    // Without a root the path is only cleaned.
    auto lexical = policy::resolve_name(-1, name, true);
    CHECK(lexical.path == "/data/outside");
    CHECK_FALSE(lexical.resolved);
}
