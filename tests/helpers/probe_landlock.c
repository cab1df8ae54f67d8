// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's open loop under a Landlock ruleset of its own
 * (bench/open_layers.sh): "loop-open-landlocked N PATH DIR" restricts itself
 * to a ruleset that governs every file right this kernel's Landlock has and
 * grants them all beneath DIR, as a policy's allowed_paths entry does, then
 * runs loop-open N PATH. Run in an unpoliced container, it gives Landlock's
 * share of a policed container's open without the policy's other layers. */
#define _GNU_SOURCE
#include "probe_net.h"

#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The file rights of each ABI: 13 in ABI 1, REFER in 2, TRUNCATE in 3, IOCTL_DEV in 5. */
static uint64_t file_rights(long abi)
{
    int count = abi >= 5 ? 16 : abi >= 3 ? 15 : abi >= 2 ? 14 : 13;
    return (1ULL << count) - 1;
}

static int restrict_beneath(const char* dir)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1)
        return -1;
    struct landlock_ruleset_attr attr = {.handled_access_fs = file_rights(abi)};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0)
        return -1;
    struct landlock_path_beneath_attr rule = {.allowed_access = attr.handled_access_fs,
                                              .parent_fd = open(dir, O_PATH | O_CLOEXEC)};
    int rc = rule.parent_fd < 0 ? -1 : (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    if (rc == 0)
        rc = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    if (rc == 0)
        rc = (int)syscall(SYS_landlock_restrict_self, ruleset, 0);
    if (rule.parent_fd >= 0)
        close(rule.parent_fd);
    close(ruleset);
    return rc;
}

int probe_landlock(int argc, char** argv)
{
    if (argc < 5 || strcmp(argv[1], "loop-open-landlocked") != 0)
        return -1;
    if (restrict_beneath(argv[4]) != 0)
        return report(-1);
    return loop_open(atoi(argv[2]), argv[3]);
}
