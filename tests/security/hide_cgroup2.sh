#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# hide_cgroup2.sh COMMAND...: runs COMMAND in a mount namespace of its own where an empty tmpfs covers
# /sys/fs/cgroup/unified, so a hybrid host looks like pure cgroup v1 (crun 1.8.1 refuses hybrid hosts
# whose cgroup2 has controllers); the host's own mounts are not touched. The tmpfs is writable because
# crun makes a directory for the "0::" line of /proc/self/cgroup.
exec unshare --mount --propagation private sh -c \
    'mount -t tmpfs -o size=1m,mode=755 cerberus-view /sys/fs/cgroup/unified && exec "$@"' hide_cgroup2 "$@"
