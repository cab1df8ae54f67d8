#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# create/start/state/kill/delete behave as runc's do on the same bundle.

load helpers

setup() { setup_bundle; }
teardown() { teardown_bundle; }

@test "run prints the container's output and exits with its status" {
    run_container sh -c 'echo hello from $(hostname); exit 7'
    [ "$status" -eq 7 ]
    [ "$output" = "hello from cerberus" ]
}

@test "create, start, state, kill, delete go through every status" {
    set_args sleep 60
    cerb create --bundle "$BUNDLE" --pid-file "$BATS_TEST_TMPDIR/pid" "$ID"
    [ "$(container_status)" = created ]
    pid=$(cat "$BATS_TEST_TMPDIR/pid")
    [ "$(cerb state "$ID" | jq .pid)" -eq "$pid" ]
    # The init waits for start: it has not exec'd sleep yet.
    [ "$(cat /proc/$pid/comm)" != sleep ]
    cerb start "$ID"
    [ "$(container_status)" = running ]
    [ "$(cat /proc/$pid/comm)" = sleep ]
    cerb kill "$ID" KILL
    for _ in $(seq 50); do [ "$(container_status)" = stopped ] && break; sleep 0.1; done
    [ "$(container_status)" = stopped ]
    cerb delete "$ID"
    run cerb state "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"does not exist"* ]]
    [ ! -e "$ROOT/$ID" ]
}

@test "misuse fails as in runc: start twice, delete running, kill stopped" {
    set_args sleep 60
    cerb create -b "$BUNDLE" "$ID"
    cerb start "$ID"
    run cerb start "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot start an already running container"* ]]
    run cerb delete "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot delete container $ID that is not stopped: running"* ]]
    cerb delete --force "$ID"
    run cerb state "$ID"
    [ "$status" -eq 1 ]
    run cerb delete "$ID"
    [ "$status" -eq 1 ]
    run cerb delete --force "$ID"
    [ "$status" -eq 0 ]
}

@test "a created container can be deleted without --force and its init is killed" {
    set_args sleep 60
    cerb create --bundle="$BUNDLE" --pid-file="$BATS_TEST_TMPDIR/pid" "$ID"
    pid=$(cat "$BATS_TEST_TMPDIR/pid")
    cerb delete "$ID"
    [ ! -e /proc/$pid ] || [ "$(awk '{print $3}' /proc/$pid/stat)" = Z ]
}

@test "start of a stopped container fails" {
    set_args true
    cerb create -b "$BUNDLE" "$ID"
    cerb start "$ID"
    for _ in $(seq 50); do [ "$(container_status)" = stopped ] && break; sleep 0.1; done
    run cerb start "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cannot start a container that has stopped"* ]]
}

@test "kill sends the named signal and kill --all reaches every process" {
    set_args sh -c 'trap "echo got-term > /tmp/term; exit 0" TERM; sleep 1000 & wait'
    edit_config '.root.readonly = false'
    cerb create -b "$BUNDLE" "$ID"
    cerb start "$ID"
    sleep 0.3
    cerb kill "$ID" TERM
    for _ in $(seq 50); do [ "$(container_status)" = stopped ] && break; sleep 0.1; done
    [ "$(container_status)" = stopped ]
    [ "$(cat "$BUNDLE/rootfs/tmp/term")" = got-term ]
}

@test "kill takes signal 0 (are the processes there?); with --all a stopped container too, as runc's" {
    set_args sleep 600
    start_container
    cerb kill "$ID" 0
    [ "$(container_status)" = running ]
    cerb kill "$ID" KILL
    for _ in $(seq 50); do [ "$(container_status)" = stopped ] && break; sleep 0.1; done
    [ "$(container_status)" = stopped ]
    # Control: without --all a stopped container is refused.
    run cerb kill "$ID" 0
    [ "$status" -eq 1 ]
    [[ "$output" == *"container not running"* ]]
    cerb kill --all "$ID" 0
    run cerb kill "$ID" 65
    [ "$status" -eq 1 ]
    [[ "$output" == *'unknown signal "65"'* ]]
}

@test "--pid-file names a file of the caller's directory, not of the bundle" {
    set_args sleep 600
    mkdir "$BATS_TEST_TMPDIR/caller"
    cd "$BATS_TEST_TMPDIR/caller"
    cerb create --pid-file pid.txt -b "$BUNDLE" "$ID"
    [ "$(cat pid.txt)" -eq "$(cerb state "$ID" | jq .pid)" ]
    [ ! -e "$BUNDLE/pid.txt" ]
    cerb delete --force "$ID"
    cerb run -d --pid-file run.pid -b "$BUNDLE" "$ID" </dev/null
    [ "$(cat run.pid)" -eq "$(cerb state "$ID" | jq .pid)" ]
}

@test "list shows containers in table and json form" {
    set_args sleep 60
    cerb create -b "$BUNDLE" "$ID"
    run cerb list
    [[ "$output" == *"$ID"*created* ]]
    [ "$(cerb list --format json | jq -r '.[0].id')" = "$ID" ]
    [ "$(cerb list -q)" = "$ID" ]
    # runc's order of fields (its own tests match the text), in list and in state.
    [ "$(cerb list --format json | jq -c '.[0] | keys_unsorted')" = \
        '["ociVersion","id","pid","status","bundle","rootfs","created","owner"]' ]
    [ "$(cerb state "$ID" | jq -c 'keys_unsorted')" = \
        '["ociVersion","id","pid","status","bundle","rootfs","created","owner"]' ]
}

@test "spec writes a config that runs, and refuses to overwrite it" {
    run cerb spec --bundle "$BUNDLE"
    [ "$status" -eq 1 ]
    [[ "$output" == *"exists"* ]]
}

@test "delete removes the container's cgroup" {
    set_args sleep 60
    cerb create -b "$BUNDLE" "$ID"
    [ -d "/sys/fs/cgroup/unified/cerberus-test/$ID" ] || [ -d "/sys/fs/cgroup/cerberus-test/$ID" ]
    cerb delete --force "$ID"
    [ ! -d "/sys/fs/cgroup/unified/cerberus-test/$ID" ]
    [ ! -d "/sys/fs/cgroup/cerberus-test/$ID" ]
    [ ! -d "/sys/fs/cgroup/pids/cerberus-test/$ID" ]
}

@test "features prints the runtime-spec features JSON with the policy annotations" {
    run cerb features
    [ "$status" -eq 0 ]
    [ "$(echo "$output" | jq -r .ociVersionMax)" = 1.1.0 ]
    echo "$output" | jq -e '.potentiallyUnsafeConfigAnnotations | index("io.cerberus.policy")'
    echo "$output" | jq -e '.linux.namespaces | index("user")'
    # The systemd driver (--systemd-cgroup) as root; a user's systemd manager is not supported.
    [ "$(echo "$output" | jq -c '.linux.cgroup | [.systemd, .systemdUser]')" = '[true,false]' ]
}

@test "global flags: --log-format json writes the error as a JSON line to --log" {
    run cerb --log "$BATS_TEST_TMPDIR/log.json" --log-format json start no-such-container
    [ "$status" -eq 1 ]
    [ "$(tail -n1 "$BATS_TEST_TMPDIR/log.json" | jq -r .level)" = error ]
    [[ "$(tail -n1 "$BATS_TEST_TMPDIR/log.json" | jq -r .msg)" == *"no-such-container"*"does not exist"* ]]
}

@test "--systemd-cgroup on a host without systemd fails with a clear error and leaves nothing" {
    [ ! -d /run/systemd/system ] || skip "systemd runs here (the systemd lane tests the driver)"
    set_args true
    run cerb --systemd-cgroup run -b "$BUNDLE" "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"systemd is not running on this host"* ]]
    [ ! -e "$ROOT/$ID" ]
    [ -z "$(find /sys/fs/cgroup -name "*$ID*" 2>/dev/null)" ]
}

@test "process.terminal: the pty master goes to --console-socket and the process has a tty" {
    edit_config '.process.terminal = true'
    set_args sh -c 'tty; echo hello-tty'
    "$RECVTTY" "$BATS_TEST_TMPDIR/console.sock" > "$BATS_TEST_TMPDIR/tty.out" &
    recv=$!
    for _ in $(seq 50); do [ -S "$BATS_TEST_TMPDIR/console.sock" ] && break; sleep 0.1; done
    cerb run -d -b "$BUNDLE" --console-socket "$BATS_TEST_TMPDIR/console.sock" "$ID"
    wait "$recv"
    run cat "$BATS_TEST_TMPDIR/tty.out"
    [[ "$output" == *"/dev/pts/0"* ]]
    [[ "$output" == *"hello-tty"* ]]
}

@test "create with process.terminal and no --console-socket is refused" {
    edit_config '.process.terminal = true'
    set_args true
    run cerb create -b "$BUNDLE" "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--console-socket"* ]]
}

@test "a bundle straight from cerberus spec (terminal: true) runs in the foreground through a pty" {
    edit_config '.process.terminal = true'
    set_args sh -c 'tty; echo in-pty; exit 5'
    run cerb run -b "$BUNDLE" "$ID" </dev/null
    [ "$status" -eq 5 ]
    [[ "${lines[0]}" == "/dev/pts/0"* ]]
    [[ "${lines[1]}" == "in-pty"* ]]
}

@test "the pty belongs to process.user.uid, its group stays devpts's (5), as runc's" {
    edit_config '.process.terminal = true | .process.user.uid = 1000 | .process.user.gid = 100'
    set_args sh -c 'stat -c %u:%g $(tty)'
    run cerb run -b "$BUNDLE" "$ID" </dev/null
    [ "$status" -eq 0 ]
    [[ "$output" == "1000:5"* ]]
    # Control: root's process, root's pty.
    edit_config '.process.user.uid = 0 | .process.user.gid = 0'
    run cerb run -b "$BUNDLE" "$ID" </dev/null
    [ "$status" -eq 0 ]
    [[ "$output" == "0:5"* ]]
}

@test "run --detach with a terminal and no --console-socket is refused" {
    edit_config '.process.terminal = true'
    set_args true
    run cerb run -d -b "$BUNDLE" "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"--console-socket"* ]]
    [ ! -e "$ROOT/$ID" ]
}
