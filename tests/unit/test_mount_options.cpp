// SPDX-License-Identifier: Apache-2.0
#include "rootfs/mounts.hpp"

#include <doctest/doctest.h>
#include <sys/mount.h>

using namespace cerberus;

TEST_CASE("the recursive options name a per-mount flag for every mount below, the last word winning")
{
    auto opts = mounts::parse_options({"rbind", "rro", "rnosuid", "rnoexec", "rexec", "ro"});
    CHECK(opts.recursive_set == (MS_RDONLY | MS_NOSUID));
    CHECK(opts.recursive_clear == MS_NOEXEC);
    CHECK(opts.flags == (MS_BIND | MS_REC | MS_RDONLY));
    CHECK(opts.data.empty());
    CHECK(mounts::parse_options({"rro", "rrw"}).recursive_clear == MS_RDONLY);
    CHECK(mounts::parse_options({"rro", "rrw"}).recursive_set == 0);
    // Not a flag of the mount itself: left to the file system, as any unknown word.
    auto unknown = mounts::parse_options({"rremount", "rsync"});
    CHECK(unknown.recursive_set == 0);
    CHECK(unknown.data == "rremount,rsync");
    // Propagation keeps its own recursive names.
    CHECK(mounts::parse_options({"rprivate"}).propagation == (MS_PRIVATE | MS_REC));
    CHECK(mounts::parse_options({"rprivate"}).recursive_set == 0);
}
