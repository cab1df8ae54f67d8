#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The CVE-2019-5736 attack on the runtime's own binary (tests/security/exe_escape.sh): an agent traps
# its /bin/sh with "#!/proc/self/exe", holds the runtime that walks into it and tries to overwrite the
# host's binary; or it opens the /proc entries of a runtime process still setting up. Here with no
# policy; the VM lane runs the same scenarios under each kind of policy.

load helpers

# scenario NAME: runs it against a copy of the binary under test; every check must hold.
scenario() {
    run sh "$BATS_TEST_DIRNAME/../security/exe_escape.sh" "$1" "$CERBERUS" "$EXE_ATTACK" "$BATS_TEST_TMPDIR/escape"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"ESCAPE ok"* ]]
    [[ "$output" != *"ESCAPE fail"* ]]
}

@test "escape control: the attack overwrites a writable copy of the runtime's binary in the container" {
    scenario control-copy
}

@test "escape: exec into a #!/proc/self/exe trap leaves the host binary unchanged" {
    scenario exec-trap
}

@test "escape: exec into a trap whose interpreter is a symlink to /proc/self/exe" {
    scenario exec-trap-symlink
}

@test "escape: the same with the sealed memfd copy (state root inside the binary's directory)" {
    scenario exec-trap-memfd
}

@test "escape: run of a container whose init execs the trap, in the agent's pid namespace" {
    scenario run-trap
}

@test "escape: exec's process is not dumpable until it execs (mem, exe, fd, environ refused)" {
    scenario exec-setup
}

@test "escape: a created init in the agent's pid namespace is not dumpable until start" {
    scenario init-setup
}

@test "escape: a createContainer hook (a host binary) cannot be opened by an agent sharing its pid namespace" {
    scenario hook-setup
}
