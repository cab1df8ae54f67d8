// SPDX-License-Identifier: Apache-2.0
#include "policy/policy_document.hpp"
#include "policy/rule_paths.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace cerberus::policy;
namespace fs = std::filesystem;

namespace {

// A rootfs with /run/secrets/token, /var/run -> ../run, /bin/sh -> busybox and /escape -> /etc (the rootfs's, with no passwd).
struct Rootfs : TempDir {
    Rootfs()
    {
        fs::create_directories(path + "/run/secrets");
        fs::create_directories(path + "/var");
        fs::create_directories(path + "/bin");
        fs::create_directories(path + "/etc");
        std::ofstream(path + "/run/secrets/token") << "token";
        std::ofstream(path + "/bin/busybox") << "";
        fs::create_directory_symlink("../run", path + "/var/run");
        fs::create_symlink("busybox", path + "/bin/sh");
        fs::create_directory_symlink("/etc", path + "/escape");
    }
};

} // namespace

TEST_CASE("rule paths: symlinks are followed inside the rootfs, the rest kept as written")
{
    Rootfs root;
    Policy p = parse_policy(R"({"denied_paths": ["/var/run/secrets/token", "/var/run/secrets/later/key", "/none/x"],
                                "read_only_paths": ["/", "/escape/passwd"], "allowed_bins": ["/bin/sh"]})");
    Policy resolved = with_resolved_paths(p, root.path + "/./bin/.."); // any spelling of the rootfs
    CHECK(resolved.denied_paths ==
          std::vector<std::string>{"/run/secrets/token", "/run/secrets/later/key", "/none/x"});
    // /escape points at the host's /etc: followed inside the rootfs, where there is none.
    CHECK(*resolved.read_only_paths == std::vector<std::string>{"/", "/etc/passwd"});
    CHECK(*resolved.allowed_bins == std::vector<std::string>{"/bin/busybox"});
    CHECK(p.denied_paths[0] == "/var/run/secrets/token"); // the policy keeps the user's spelling
}
