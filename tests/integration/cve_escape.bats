#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# runc's published escapes since 2019 (tests/security/cve_escape.sh), each with its controls, against
# this build; the races make a bounded number of attempts and fail if the attacker won any. The
# CVE-2019-5736 attack on the runtime's binary is escape.bats. The VM lane runs the races again
# (tests/vm/cases/runtime_races.sh); `make cve-table` runs every scenario against runc and crun too.

load helpers

# scenario NAME: every check must hold.
scenario() {
    run env RACE_ATTACK="$RACE_ATTACK" RECVTTY="$RECVTTY" \
        sh "$BATS_TEST_DIRNAME/../security/cve_escape.sh" "$1" "$CERBERUS" "$BATS_TEST_TMPDIR/cve"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"CVE ok"* ]]
    [[ "$output" != *"CVE fail"* ]]
}

@test "CVE-2024-21626: exec --cwd /proc/self/fd/N (N = 3..20) never works outside the root" {
    scenario cwd-exec
}

@test "CVE-2024-21626: exec --process with cwd /proc/self/fd/N never works outside the root" {
    scenario cwd-exec-process
}

@test "CVE-2024-21626: process.cwd /proc/self/fd/N never works outside the root" {
    scenario cwd-create
}

@test "CVE-2022-29162: exec --cap and exec --process leave the inheritable set empty" {
    scenario caps-exec
}

@test "CVE-2023-25809: the host's cgroupfs given to a user namespace is read-only, submounts too" {
    scenario cgroupfs-userns
}

@test "CVE-2023-25809: the host's /sys given to a user namespace is read-only, submounts too" {
    scenario sysfs-userns
}

@test "CVE-2023-28642, CVE-2023-27561: /proc or /sys a symlink in the image is refused" {
    scenario proc-symlink
}

@test "CVE-2019-16884: a bind or tmpfs over /proc takes no write (refused), and no sysctl reaches the host" {
    scenario proc-over
}

@test "CVE-2025-52881: a mount a symlink sends into procfs is refused, and no sysctl reaches the host" {
    scenario sysctl-symlink
}

@test "CVE-2026-41579: /dev a symlink to the host: nothing made there" {
    scenario dev-symlink
}

@test "CVE-2025-52565: /dev/console a symlink is not followed; with a terminal /dev/console is the pty" {
    scenario console-symlink
}

@test "CVE-2021-30465, CVE-2019-19921: a racing volume never takes a mount outside the root" {
    scenario dest-race
}

@test "CVE-2024-45310: a racing volume never has the runtime make directories or files on the host" {
    scenario mkdir-race
}

@test "CVE-2025-52881: a racing volume never sends a sysctl write out of procfs" {
    scenario sysctl-race
}

@test "CVE-2019-19921, CVE-2023-27561, CVE-2025-52881: a racing /proc in a shared root keeps its masks and sysctls" {
    scenario proc-race
}

@test "CVE-2025-31133: a racing /dev/null never puts another file over a masked path" {
    scenario devnull-race
}

@test "CVE-2025-52565: a racing /dev/pts never hands the process another file as its terminal" {
    scenario console-race
}

# The refusals name the field, and leave nothing behind.
refused() {
    run cerb create -b "$BUNDLE" "$ID"
    echo "status=$status output=$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$1"* ]]
    [ ! -e "$ROOT/$ID" ]
    [ ! -d "/sys/fs/cgroup/pids/cerberus-test/$ID" ]
    [ ! -d "/sys/fs/cgroup/unified/cerberus-test/$ID" ]
}

@test "refused: procfs through a symlink names the mount, and leaves nothing" {
    setup_bundle
    rm -rf "$BUNDLE/rootfs/proc"
    ln -s /elsewhere "$BUNDLE/rootfs/proc"
    refused "mounts[0].destination /proc: proc goes only on a directory reached through no symlink"
}

@test "refused: a mount into procfs names the mount, and leaves nothing; a symlink inside the root still works" {
    setup_bundle
    mkdir -p "$BUNDLE/rootfs/real/conf" "$BATS_TEST_TMPDIR/vol"
    ln -s /real/conf "$BUNDLE/rootfs/conf"
    edit_config --arg v "$BATS_TEST_TMPDIR/vol" '.mounts += [{destination: "/conf/stack", type: "bind", source: $v, options: ["rbind"]}]'
    run_container sh -c 'grep -c " /real/conf/stack " /proc/self/mountinfo'
    [ "$status" -eq 0 ]
    [ "$output" = 1 ]
    ln -s /proc/sys/kernel "$BUNDLE/rootfs/data"
    edit_config --arg v "$BATS_TEST_TMPDIR/vol" '.mounts += [{destination: "/data", type: "bind", source: $v, options: ["rbind"]}]'
    refused "mounts[$(($(jq '.mounts | length' "$BUNDLE/config.json") - 1))].destination /data: resolves into procfs"
}

teardown() { teardown_bundle 2>/dev/null || true; }
