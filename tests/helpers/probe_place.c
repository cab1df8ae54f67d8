// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's renames (tests/vm/cases/policy_place.sh): "rename OLD NEW
 * [noreplace|exchange|whiteout]" through renameat2, which busybox's mv does
 * not reach (it copies on EXDEV, and has no flags). Prints "ok" or
 * "errno=N (NAME)". */
#define _GNU_SOURCE
#include "probe_net.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int probe_place(int argc, char** argv)
{
    if (argc < 4 || strcmp(argv[1], "rename") != 0)
        return -1;
    unsigned flags = 0;
    if (argc > 4 && !strcmp(argv[4], "noreplace"))
        flags = RENAME_NOREPLACE;
    else if (argc > 4 && !strcmp(argv[4], "exchange"))
        flags = RENAME_EXCHANGE;
    else if (argc > 4 && !strcmp(argv[4], "whiteout"))
        flags = RENAME_WHITEOUT;
    return report(renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3], flags));
}
