#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Bad input is refused with an error naming the problem, a non-zero exit,
# and nothing left on the host: no state dir, cgroup or process.

load helpers

setup() { setup_bundle; set_args true; }
teardown() { teardown_bundle; }

# expect_refused TEXT: create fails, names TEXT, and leaves nothing behind.
expect_refused() {
    run cerb create -b "$BUNDLE" "$ID"
    echo "status=$status output=$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"$1"* ]]
    [ ! -e "$ROOT/$ID" ]
    [ ! -d "/sys/fs/cgroup/unified/cerberus-test/$ID" ]
    [ ! -d "/sys/fs/cgroup/pids/cerberus-test/$ID" ]
    [ ! -d "/sys/fs/cgroup/memory/cerberus-test/$ID" ]
    run ! pgrep -f "cerberus:init" -P $$
}

@test "bad JSON names the file" {
    echo '{"ociVersion": "1.1.0",' > "$BUNDLE/config.json"
    expect_refused "$BUNDLE/config.json: invalid JSON"
}

@test "a wrong type names the field" {
    edit_config '.process.user.uid = "root"'
    expect_refused "process.user.uid: expected an integer"
}

@test "an unknown namespace names the field and the value" {
    local index
    index=$(jq '.linux.namespaces | length' "$BUNDLE/config.json")
    edit_config '.linux.namespaces += [{"type": "nosuchns"}]'
    expect_refused "linux.namespaces[$index].type: unknown namespace \"nosuchns\""
}

@test "a missing rootfs names root.path" {
    rm -rf "$BUNDLE/rootfs"
    expect_refused "root.path"
}

@test "a missing process.args is refused" {
    edit_config 'del(.process.args)'
    expect_refused "process.args"
}

@test "an unknown capability names the set and the name" {
    edit_config '.process.capabilities.bounding += ["CAP_NOT_REAL"]'
    expect_refused 'process.capabilities.bounding: unknown capability "CAP_NOT_REAL"'
}

@test "an unknown seccomp action names the field" {
    edit_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_BOGUS"}]}'
    expect_refused 'linux.seccomp.syscalls[0].action'
}

@test "an unknown rlimit is refused" {
    edit_config '.process.rlimits += [{"type": "RLIMIT_BOGUS", "soft": 1, "hard": 1}]'
    expect_refused 'process.rlimits[1].type: unknown rlimit "RLIMIT_BOGUS"'
}

@test "a program that does not exist fails at create, leaving nothing" {
    set_args /no/such/program
    expect_refused "/no/such/program"
}

@test "a failing mount fails create and leaves nothing" {
    edit_config '.mounts += [{"destination": "/data", "type": "bind", "source": "/no/such/dir", "options": ["rbind"]}]'
    expect_refused "/no/such/dir"
}

@test "a unified key of a controller a v1 hierarchy holds is refused up front, as runc's invalid configuration" {
    awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { found = 1 } END { exit !found }' /proc/mounts ||
        skip "the memory controller is not in a cgroup v1 hierarchy on this host"
    # The control: a core cgroup2 file (no controller) goes to the v2 hierarchy beside the v1 ones.
    edit_config '.linux.resources.unified = {"cgroup.max.depth": "5"}'
    cerb create -b "$BUNDLE" "$ID" </dev/null >/dev/null 2>&1
    [ "$(cat "/sys/fs/cgroup/unified/cerberus-test/$ID/cgroup.max.depth")" = 5 ]
    cerb delete --force "$ID"
    edit_config '.linux.resources.unified = {"memory.min": "131072"}'
    expect_refused 'linux.resources.unified["memory.min"]: invalid configuration'
}

@test "a bad cgroup value names the file and leaves no cgroup" {
    edit_config '.linux.resources.cpu = {"cpus": "not-a-cpu"}'
    expect_refused "cpuset"
}

@test "a failing createRuntime hook fails create and leaves nothing" {
    edit_config '.hooks.createRuntime = [{"path": "/bin/false"}]'
    expect_refused "error running hook #0 (createRuntime, /bin/false): exited with status 1"
}

@test "an invalid container id is refused" {
    run cerb create -b "$BUNDLE" "bad/id"
    [ "$status" -eq 1 ]
    [[ "$output" == *'invalid container id "bad/id"'* ]]
}

@test "creating an existing container is refused and keeps the first" {
    set_args sleep 60
    cerb create -b "$BUNDLE" "$ID"
    run cerb create -b "$BUNDLE" "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"already exists"* ]]
    [ "$(container_status)" = created ]
}

@test "an unknown flag and an unknown command are usage errors" {
    run cerb create --no-such-flag "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"flag provided but not defined: --no-such-flag"* ]]
    run cerb frobnicate
    [ "$status" -eq 1 ]
    [[ "$output" == *"no such command: frobnicate"* ]]
}

@test "seccomp notify: runc's words for a rule on write and for an agent that is not listening" {
    agent="$BATS_TEST_TMPDIR/agent.sock"
    edit_config --arg agent "$agent" '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "listenerPath": $agent,
        "syscalls": [{"names": ["write"], "action": "SCMP_ACT_NOTIFY"}]}'
    expect_refused "SCMP_ACT_NOTIFY cannot be used for the write syscall"
    edit_config '.linux.seccomp.syscalls[0].names = ["mkdir"]'
    expect_refused "failed to connect with seccomp agent $agent: "
    # Control: the same profile without the notify rule is taken.
    edit_config 'del(.linux.seccomp.listenerPath) | .linux.seccomp.syscalls[0].action = "SCMP_ACT_ERRNO"'
    cerb create -b "$BUNDLE" "$ID"
}
