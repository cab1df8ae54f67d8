#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# runc's published container escapes since 2019, replayed against any OCI runtime (cerberus, runc, crun):
# each scenario sets up the attack's preconditions, shows they hold (its controls), attacks, and judges
# where the attack landed without harming the host (its targets are files and directories of WORKDIR, a
# container's own hostname, domainname and mounts). Races make a bounded number of attempts and count
# how many the attacker won. The CVE-2019-5736 attack on the runtime's binary is tests/security/exe_escape.sh.
#
# Usage: cve_escape.sh SCENARIO RUNTIME WORKDIR
#   SCENARIO  cwd-exec | cwd-exec-process | cwd-create          CVE-2024-21626
#             caps-exec                                         CVE-2022-29162
#             cgroupfs-userns | sysfs-userns                    CVE-2023-25809
#             proc-symlink                                      CVE-2023-28642, CVE-2023-27561
#             proc-over                                         CVE-2019-16884
#             sysctl-symlink | sysctl-race                      CVE-2025-52881
#             dest-race                                         CVE-2021-30465, CVE-2019-19921
#             mkdir-race                                        CVE-2024-45310
#             proc-race                                         CVE-2019-19921, CVE-2023-27561, CVE-2025-52881
#             devnull-race                                      CVE-2025-31133
#             console-symlink | console-race                    CVE-2025-52565
#             dev-symlink                                       CVE-2026-41579
#   RUNTIME   the runtime's binary; $RUNTIME_VIEW, when set, is a command every call of it runs under
#             (e.g. a mount namespace that hides cgroup2 from crun on a hybrid host)
#   WORKDIR   emptied and used for bundles, volumes and state
# Environment: RACE_ATTACK (the static cerberus-race-attack), RECVTTY (cerberus-recvtty, for the console
# scenarios), CVE_RACE_SECONDS and CVE_RACE_ATTEMPTS (each race's budget; default 4 s, 40 attempts).
# Prints one line per check, "CVE ok SCENARIO: CHECK[: DETAIL]" or "CVE fail SCENARIO: CHECK: DETAIL";
# checks named "control, ..." show the preconditions. Exits 1 when a check failed. Needs jq and busybox.
set -u
scenario=$1 runtime=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
RACE_ATTACK=${RACE_ATTACK:-$(command -v cerberus-race-attack || true)}
RECVTTY=${RECVTTY:-$(command -v cerberus-recvtty || true)}
RUNTIME_VIEW=${RUNTIME_VIEW:-}
state="$work/state"

. "$here/cve_lib.sh"
. "$here/cve_process.sh"
. "$here/cve_rootfs.sh"
. "$here/cve_race.sh"

case "$runtime" in /*) ;; *) runtime=$(command -v "$runtime") ;; esac
rm -rf "$work" && mkdir -p "$work" "$state" || exit 1
chmod 755 "$work"

case "$scenario" in
cwd-exec | cwd-exec-process | cwd-create) scenario_cwd "${scenario#cwd-}" ;;
caps-exec) scenario_caps ;;
cgroupfs-userns) scenario_cgroupfs cgroup ;;
sysfs-userns) scenario_cgroupfs sysfs ;;
proc-symlink) scenario_proc_symlink ;;
proc-over) scenario_proc_over ;;
sysctl-symlink) scenario_sysctl_symlink ;;
dev-symlink) scenario_dev_symlink ;;
console-symlink) scenario_console_symlink ;;
console-race) scenario_console_race ;;
dest-race) scenario_dest_race ;;
mkdir-race) scenario_mkdir_race ;;
sysctl-race) scenario_sysctl_race ;;
proc-race) scenario_proc_race ;;
devnull-race) scenario_devnull_race ;;
*)
    echo "cve_escape.sh: unknown scenario $scenario" >&2
    exit 2
    ;;
esac
exit "$failed"
