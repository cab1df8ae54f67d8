#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# No descriptor of the host reaches a process in the container (runc's CVE-2024-21626): what each entry
# point leaves open, and working directories named through /proc/self/fd/N, which would lead out of the
# container's root through a directory of the host still open there.

load helpers

setup() {
    setup_bundle
    set_args sleep 600
}
teardown() { teardown_bundle; }

policy='{"allowed_hosts": ["192.0.2.1:443"], "allowed_paths": ["/"]}'

@test "fds: only stdio in the init under create + start, and in exec's process under --process and --tty" {
    set_args probe hold 600 fds
    cerb create -b "$BUNDLE" "$ID" </dev/null >"$BATS_TEST_TMPDIR/init.out"
    cerb start "$ID"
    for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/init.out" ] && break; sleep 0.1; done
    [ "$(cat "$BATS_TEST_TMPDIR/init.out")" = "fds=0" ]
    echo '{"args": ["probe", "fds"], "cwd": "/", "env": ["PATH=/bin"]}' >"$BATS_TEST_TMPDIR/process.json"
    run cerb exec --process "$BATS_TEST_TMPDIR/process.json" "$ID"
    [ "$output" = "fds=0" ]
    sock="$BATS_TEST_TMPDIR/console.sock"
    "$RECVTTY" "$sock" >"$BATS_TEST_TMPDIR/tty.out" &
    receiver=$!
    for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
    cerb exec --detach --tty --console-socket "$sock" "$ID" probe fds
    wait "$receiver"
    grep -q '^fds=0' "$BATS_TEST_TMPDIR/tty.out"
}

@test "fds: only stdio under a policy (its ruleset is the set-up's, closed on exec), in the init and in exec" {
    edit_config --arg p "$policy" '.annotations["io.cerberus.policy"] = $p'
    set_args probe hold 600 fds
    cerb run -d -b "$BUNDLE" "$ID" </dev/null >"$BATS_TEST_TMPDIR/init.out"
    for _ in $(seq 50); do [ -s "$BATS_TEST_TMPDIR/init.out" ] && break; sleep 0.1; done
    [ "$(cat "$BATS_TEST_TMPDIR/init.out")" = "fds=0" ]
    run cerb exec "$ID" probe fds
    [ "$output" = "fds=0" ]
}

@test "fds: socket activation passes LISTEN_FDS first, then --preserve-fds, and says so in the environment" {
    set_args sh -c 'probe fds; env | grep ^LISTEN_ | sort; cat <&3; cat <&4'
    echo activated >"$BATS_TEST_TMPDIR/listen"
    echo preserved >"$BATS_TEST_TMPDIR/preserved"
    run env LISTEN_FDS=1 bash -c 'export LISTEN_PID=$$; exec "$@"' _ "$CERBERUS" --root "$ROOT" run --preserve-fds 1 \
        -b "$BUNDLE" "$ID" 3<"$BATS_TEST_TMPDIR/listen" 4<"$BATS_TEST_TMPDIR/preserved" </dev/null
    echo "$output"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "fd3 fd4 fds=2" ]
    [ "${lines[1]}" = "LISTEN_FDS=1" ]
    [ "${lines[2]}" = "LISTEN_PID=1" ]
    [ "${lines[3]}" = activated ]
    [ "${lines[4]}" = preserved ]
    # Control: LISTEN_PID names another process, so the fds are not ours to pass.
    set_args probe fds
    run env LISTEN_FDS=1 LISTEN_PID=1 "$CERBERUS" --root "$ROOT" run -b "$BUNDLE" "$ID" 3<"$BATS_TEST_TMPDIR/listen" </dev/null
    [ "$output" = "fds=0" ]
}

@test "cwd: exec --cwd /proc/self/fd/N never leaves the container's root (N = 0..20, --cwd and --process)" {
    start_container
    for n in $(seq 0 20); do
        run cerb exec --cwd "/proc/self/fd/$n" "$ID" sh -c 'ls ../../../../../../..'
        echo "fd $n: status=$status $output"
        [ "$status" -ne 0 ]
        [[ "$output" == *"cwd (\"/proc/self/fd/$n\")"* ]]
        [[ "$output" != *bin* ]]
        for via in /proc/thread-self/fd /dev/fd; do
            run cerb exec --cwd "$via/$n/.." "$ID" sh -c 'ls ../../../../../../..'
            [ "$status" -ne 0 ]
            [[ "$output" != *bin* ]]
        done
    done
    echo '{"args": ["sh", "-c", "ls ../../../../../../.."], "cwd": "/proc/self/fd/3", "env": ["PATH=/bin"]}' \
        >"$BATS_TEST_TMPDIR/process.json"
    run cerb exec --process "$BATS_TEST_TMPDIR/process.json" "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *'cwd ("/proc/self/fd/3")'* ]]
    # Control: an ordinary working directory.
    run cerb exec --cwd /tmp "$ID" sh -c 'cd .. && ls'
    [ "$status" -eq 0 ]
    [[ "$output" == *bin* ]]
}

@test "cwd: a directory of the host handed over with --preserve-fds is refused as the working directory" {
    start_container
    # Control: the process may use the descriptor it was given, and through it sees the host's /etc.
    run cerb exec --preserve-fds 1 "$ID" sh -c 'cd /proc/self/fd/3 && ls' 3</etc
    [ "$status" -eq 0 ]
    [[ "$output" == *passwd* ]]
    # As its working directory, the runtime refuses it: it is not inside the container's root.
    run cerb exec --preserve-fds 1 --cwd /proc/self/fd/3 "$ID" ls 3</etc
    [ "$status" -ne 0 ]
    [[ "$output" == *'cwd ("/proc/self/fd/3") set in config.json is outside the container'* ]]
    [[ "$output" != *passwd* ]]
    run cerb exec --cwd /proc/self/fd/0 "$ID" ls </etc
    [ "$status" -ne 0 ]
    [[ "$output" == *"is outside the container's root"* ]]
}

@test "cwd: process.cwd /proc/self/fd/N is refused at create and run, naming it, leaving nothing" {
    marker="cerb-cwd-escape-$$"
    for n in $(seq 3 20); do
        for cwd in "/proc/self/fd/$n" "/proc/self/fd/$n/$marker" "/dev/fd/$n/$marker"; do
            edit_config --arg cwd "$cwd" '.process.cwd = $cwd'
            run cerb run -b "$BUNDLE" "$ID" </dev/null
            echo "$cwd: status=$status $output"
            [ "$status" -ne 0 ]
            [[ "$output" == *"cwd"*"/fd/$n"* ]]
            [ ! -e "$ROOT/$ID" ]
            [ ! -d "/sys/fs/cgroup/unified/cerberus-test/$ID" ]
            [ ! -d "/sys/fs/cgroup/pids/cerberus-test/$ID" ]
        done
        edit_config --arg cwd "/proc/self/fd/$n" '.process.cwd = $cwd'
        run cerb create -b "$BUNDLE" "$ID" </dev/null
        [ "$status" -ne 0 ]
        [ ! -e "$ROOT/$ID" ]
    done
    # Nothing was made on the host through a descriptor, under any name.
    [ -z "$(find / -xdev -name "$marker" 2>/dev/null | head -1)" ]
    # Control: a working directory that does not exist yet is made inside the root.
    edit_config '.process.cwd = "/tmp/made/here"'
    run_container sh -c 'cd .. && ls'
    [ "$status" -eq 0 ]
    [ "$output" = here ]
    [ -d "$BUNDLE/rootfs/tmp/made/here" ]
}

@test "a relative --root is taken from the working directory, and a failed create leaves nothing under it" {
    cd "$BATS_TEST_TMPDIR"
    "$CERBERUS" --root state-rel run -d -b "$BUNDLE" "$ID" </dev/null
    run "$CERBERUS" --root state-rel state "$ID"
    [[ "$output" == *'"status": "running"'* ]]
    "$CERBERUS" --root state-rel delete --force "$ID"
    edit_config '.process.cwd = "/proc/self/fd/7"'
    run "$CERBERUS" --root state-rel run -b "$BUNDLE" "$ID" </dev/null
    [ "$status" -ne 0 ]
    [ -z "$(ls state-rel)" ]
}
