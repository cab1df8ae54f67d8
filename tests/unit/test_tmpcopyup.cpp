// SPDX-License-Identifier: Apache-2.0
// The tmpcopyup mount option: parsed apart from the tmpfs data, and the
// copy of a hidden directory's tree (done here between two plain directories).
#include "base/error.hpp"
#include "base/fd.hpp"
#include "rootfs/mounts.hpp"
#include "rootfs/tmpcopyup.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <string>

using namespace cerberus;

namespace {

std::string read_all(const std::string& path)
{
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace

TEST_CASE("tmpcopyup is a flag, not tmpfs data")
{
    auto opts = mounts::parse_options({"rw", "nosuid", "tmpcopyup", "size=1m"});
    CHECK(opts.tmpcopyup);
    CHECK(opts.data == "size=1m");
    CHECK_FALSE(mounts::parse_options({"size=1m"}).tmpcopyup);
}

TEST_CASE("copy_up copies files, directories, symlinks and fifos with their modes")
{
    char base_template[] = "/tmp/cerberus-tmpcopyup.XXXXXX";
    std::string base = ::mkdtemp(base_template);
    std::string from = base + "/from", to = base + "/to";
    REQUIRE(::mkdir(from.c_str(), 0755) == 0);
    REQUIRE(::mkdir(to.c_str(), 0755) == 0);
    REQUIRE(::mkdir((from + "/sub").c_str(), 0700) == 0);
    std::ofstream(from + "/file") << "hello";
    std::ofstream(from + "/sub/deep") << "deep";
    REQUIRE(::chmod((from + "/file").c_str(), 0640) == 0);
    REQUIRE(::symlink("file", (from + "/link").c_str()) == 0);
    REQUIRE(::mkfifo((from + "/fifo").c_str(), 0600) == 0);

    UniqueFd hidden(::open(from.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(hidden);
    UniqueFd to_dir(::open(to.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    mounts::copy_up(hidden.get(), to_dir.get(), "/to");

    struct stat st;
    REQUIRE(::stat((to + "/file").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(read_all(to + "/file") == "hello");
    CHECK(read_all(to + "/sub/deep") == "deep");
    REQUIRE(::stat((to + "/sub").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0700);
    char target[PATH_MAX] = {};
    CHECK(::readlink((to + "/link").c_str(), target, sizeof target - 1) == 4);
    CHECK(std::string(target) == "file");
    REQUIRE(::lstat((to + "/fifo").c_str(), &st) == 0);
    CHECK(S_ISFIFO(st.st_mode));

    // A name already there is an error that names it, not a silent overwrite.
    CHECK_THROWS_WITH_AS(mounts::copy_up(hidden.get(), to_dir.get(), "/to"), doctest::Contains("./file"), Error);
    CHECK(std::system(("rm -rf " + base).c_str()) == 0);
}
