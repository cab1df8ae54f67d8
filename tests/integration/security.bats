#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# seccomp and cgroup limits really hold inside the container.

load helpers

setup() { setup_bundle; }
teardown() { teardown_bundle; }

@test "seccomp: a syscall denied with errnoRet fails with that errno; others work" {
    edit_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64"], "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]} | .root.readonly = false'
    run_container sh -c 'probe mkdir /tmp/x; probe read /bin/busybox'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "errno=1 (EPERM)" ]
    [ "${lines[1]}" = "ok" ]
}

@test "seccomp: argument filters deny only the matching call" {
    # socket(AF_INET6, ...) refused, AF_INET allowed.
    edit_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 97, "args": [{"index": 0, "value": 10, "op": "SCMP_CMP_EQ"}]}]}'
    run_container sh -c 'probe connect udp ::1 9; probe connect udp 127.0.0.1 9'
    [ "${lines[0]}" = "errno=97 (EAFNOSUPPORT)" ]
    # The IPv4 socket is created; what connect then says depends on the netns's lo.
    [ -n "${lines[1]}" ]
    [[ "${lines[1]}" != *EAFNOSUPPORT* ]]
}

@test "seccomp: a profile that denies faccessat2 still runs the program, as under runc" {
    # Older profiles (runtime-tools', many in the wild) predate faccessat2: the
    # runtime's own exec check must not turn that into a refused create.
    edit_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["faccessat2"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
    run_container probe read /bin/busybox
    [ "$status" -eq 0 ]
    [ "$output" = "ok" ]
}

@test "seccomp: a profile that refuses openat2, fsopen and getcwd, loaded before the identity, still starts and execs" {
    # Without noNewPrivileges the filter goes in while the process still has
    # its capabilities, before the init waits for start: what the runtime does
    # after must not need the calls such a profile refuses (runtime-tools' own
    # profiles refuse openat2 and fsopen, its linux_seccomp test getcwd).
    edit_config '.process.noNewPrivileges = false | .linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["openat2", "fsopen", "fsmount", "fsconfig", "open_tree", "move_mount", "getcwd"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}'
    set_args sleep 60
    cerb create -b "$BUNDLE" "$ID" </dev/null
    run cerb start "$ID"
    [ "$status" -eq 0 ]
    [ "$(container_status)" = running ]
    run cerb exec "$ID" probe read /bin/busybox
    [ "$status" -eq 0 ]
    [ "$output" = ok ]
    # Control: the filter is in force in the process.
    run cerb exec "$ID" sh -c 'cd /tmp && pwd -P'
    [[ "$output" != /tmp ]]
    cerb delete -f "$ID"
}

@test "seccomp: SCMP_ACT_KILL_PROCESS kills the process with SIGSYS" {
    edit_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL_PROCESS"}]}'
    run_container probe mkdir /tmp/x
    [ "$status" -eq $((128 + 31)) ]
}

@test "seccomp: with a denying default, a call newer than every one the profile names fails with ENOSYS" {
    # As under runc: glibc falls back to an older call on ENOSYS (clone3 to
    # clone) but gives up on EPERM, so an old profile must not refuse calls
    # it could not know of. x86-64's largest named here is close_range (436).
    allowed='["execve", "brk", "arch_prctl", "set_tid_address", "set_robust_list", "rseq", "prlimit64",
              "mprotect", "mmap", "munmap", "readlink", "uname", "getrandom", "newfstatat", "fstat", "write",
              "exit", "exit_group", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "close", "close_range",
              "fcntl", "ioctl", "futex", "getpid", "openat", "read"]'
    edit_config --argjson allowed "$allowed" '.root.readonly = false | .linux.seccomp = {"defaultAction": "SCMP_ACT_ERRNO", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"], "syscalls": [{"names": $allowed, "action": "SCMP_ACT_ALLOW"}, {"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO"}]}'
    run_container probe abi 64 1000
    [ "$output" = "errno=38 (ENOSYS)" ]
    # x32's numbers carry bit 30 (0x40000000); its largest named is rt_sigreturn (512 + 1).
    run_container probe abi 64 0x400003e8
    [ "$output" = "errno=38 (ENOSYS)" ]
    # Controls: a named call the profile refuses, and an unnamed one (getuid, 102) below the largest.
    run_container probe mkdir /tmp/x
    [ "$output" = "errno=1 (EPERM)" ]
    run_container probe abi 64 102
    [ "$output" = "errno=1 (EPERM)" ]
}

@test "cgroups: a pids limit holds" {
    edit_config '.linux.resources.pids = {"limit": 10}'
    run_container probe fork 50
    [ "$status" -eq 0 ]
    # The probe itself is one of the ten.
    [ "$output" = "forked=9" ]
}

@test "cgroups: memory and cpu limits are written where the host keeps them" {
    edit_config '.linux.resources.memory = {"limit": 67108864} | .linux.resources.cpu = {"quota": 50000, "period": 100000, "shares": 512}'
    set_args sleep 60
    cerb create -b "$BUNDLE" "$ID"
    path="cerberus-test/$ID"
    if [ -d /sys/fs/cgroup/memory ]; then # hybrid host: v1 controllers
        [ "$(cat /sys/fs/cgroup/memory/$path/memory.limit_in_bytes)" = 67108864 ]
        [ "$(cat /sys/fs/cgroup/cpu/$path/cpu.cfs_quota_us)" = 50000 ]
        [ "$(cat /sys/fs/cgroup/cpu/$path/cpu.shares)" = 512 ]
        pid=$(cerb state "$ID" | jq .pid)
        grep -q "memory:/$path\$" /proc/$pid/cgroup
        grep -q "0::/$path\$" /proc/$pid/cgroup
    else
        [ "$(cat /sys/fs/cgroup/$path/memory.max)" = 67108864 ]
        [ "$(cat /sys/fs/cgroup/$path/cpu.max)" = "50000 100000" ]
    fi
}

@test "cgroups: the device rules refuse a device node the config does not allow" {
    edit_config '.linux.devices = [{"type": "c", "path": "/dev/kmsg", "major": 1, "minor": 11, "fileMode": 438}]'
    run_container sh -c 'probe read /dev/kmsg; probe read /dev/null'
    [ "${lines[0]}" = "errno=1 (EPERM)" ]
    [ "${lines[1]}" = "ok" ]
}
