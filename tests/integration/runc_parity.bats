#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The same bundle under runc and under cerberus must look the same from
# inside (cgroup view, HOME) and fail with the same words (engines parse them:
# Docker and Podman turn "no such file or directory" / "executable file not
# found" into exit status 127 and "permission denied" into 126).

load helpers

setup() {
    command -v runc >/dev/null || skip "runc is not installed"
    setup_bundle
    RUNC_ROOT="$BATS_TEST_TMPDIR/runc-state"
    printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'agent:x:1000:1000::/home/agent:/bin/sh' >"$BUNDLE/rootfs/etc/passwd"
    mkdir -p "$BUNDLE/rootfs/home/agent"
}

teardown() {
    runc --root "$RUNC_ROOT" delete --force "$ID" >/dev/null 2>&1 || true
    teardown_bundle
}

# on RUNTIME ARG...: `run` of the bundle with these args under runc or cerberus.
on() {
    local runtime=$1
    shift
    set_args "$@"
    if [ "$runtime" = runc ]; then
        run runc --root "$RUNC_ROOT" run -b "$BUNDLE" "$ID"
    else
        run cerb run -b "$BUNDLE" "$ID"
    fi
    echo "$runtime: status=$status output: $output"
}

# same_output ARG...: both runtimes exit 0 and print the same.
same_output() {
    on runc "$@"
    [ "$status" -eq 0 ]
    local from_runc=$output
    on cerberus "$@"
    [ "$status" -eq 0 ]
    [ "$output" = "$from_runc" ]
}

# runc_error ARG...: the message runc's run fails with (its JSON log, unquoted).
runc_error() {
    set_args "$@"
    if runc --root "$RUNC_ROOT" --log "$BATS_TEST_TMPDIR/runc.log" --log-format json run -b "$BUNDLE" "$ID" 2>/dev/null; then
        echo "runc ran $* without an error" >&2
        return 1
    fi
    jq -r 'select(.level == "error") | .msg' "$BATS_TEST_TMPDIR/runc.log" | tail -n 1
    rm -f "$BATS_TEST_TMPDIR/runc.log"
}

@test "the cgroup view from inside is runc's: v1 hierarchies on a hybrid host, cgroup2 on a unified one" {
    edit_config '.linux.resources.memory = {"limit": 67108864}'
    if [ "$(cgroup_layout)" = hybrid ]; then
        limit=/sys/fs/cgroup/memory/memory.limit_in_bytes
    else
        limit=/sys/fs/cgroup/memory.max
    fi
    same_output sh -c "ls /sys/fs/cgroup; cat $limit; cat /proc/self/cgroup"
    [[ "$output" == *67108864* ]]
    # The mount is read-only, as the spec asks.
    same_output sh -c "mkdir /sys/fs/cgroup/x 2>/dev/null || echo refused"
    [[ "$output" == *refused* ]]
}

@test "the cgroup view is the container's own in a cgroup namespace and in a user namespace" {
    [ "$(cgroup_layout)" = hybrid ] || skip "a v1 view needs a hybrid host"
    edit_config '.linux.resources.memory = {"limit": 67108864}'
    edit_config '.linux.namespaces |= map(select(.type != "cgroup")) + [{"type": "cgroup"}]'
    same_output sh -c 'cat /proc/self/cgroup; cat /sys/fs/cgroup/memory/memory.limit_in_bytes'
    edit_config '.linux.namespaces |= map(select(.type != "cgroup")) | .linux.namespaces += [{"type": "user"}]
        | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
        | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
    chown -R 100000:100000 "$BUNDLE/rootfs"
    # runc reaches the rootfs as the mapped root: the temporary parents must let it through.
    for dir in "$BATS_RUN_TMPDIR" "$BATS_TEST_TMPDIR" "$BUNDLE"; do chmod o+x "$dir"; done
    same_output sh -c 'ls /sys/fs/cgroup; cat /sys/fs/cgroup/memory/memory.limit_in_bytes'
    [[ "$output" == *67108864* ]]
}

@test "the policy's cgroup id is still the container's cgroup2 directory with the v1 view" {
    set_args sleep 300
    cerb run -d -b "$BUNDLE" "$ID"
    pid=$(cerb state "$ID" | jq .pid)
    unified=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
    path=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
    [ "$path" = "/cerberus-test/$ID" ]
    # bpf_get_current_cgroup_id() of the container's tasks is the inode of
    # that directory in cgroup2: the key cerberus installs the policy under.
    [ "$(stat -c %i "$unified$path")" = "$(stat -c %i "$unified/cerberus-test/$ID")" ]
    [ -n "$(cat "$unified$path/cgroup.procs")" ]
}

@test "HOME comes from the container's passwd when the spec has none, as in runc" {
    edit_config '.process.env = ["PATH=/bin"]'
    # uid 4242 has no passwd line: "/".
    for uid_home in 0:/root 1000:/home/agent 4242:/; do
        edit_config ".process.user = {\"uid\": ${uid_home%%:*}, \"gid\": ${uid_home%%:*}}"
        same_output sh -c 'echo "HOME=$HOME"'
        [ "$output" = "HOME=${uid_home#*:}" ]
    done
    edit_config '.process.user = {"uid": 0, "gid": 0} | .process.env += ["HOME=/work"]'
    same_output sh -c 'echo "HOME=$HOME"'
    [ "$output" = "HOME=/work" ]
}

@test "exec sets HOME the same way" {
    edit_config '.process.env = ["PATH=/bin"]'
    set_args sleep 300
    cerb run -d -b "$BUNDLE" "$ID"
    [ "$(cerb exec "$ID" sh -c 'echo $HOME')" = /root ]
    [ "$(cerb exec --user 1000:1000 "$ID" sh -c 'echo $HOME')" = /home/agent ]
    [ "$(cerb exec --env HOME=/x "$ID" sh -c 'echo $HOME')" = /x ]
}

@test "a program that cannot run fails at create with runc's words" {
    for program in /nonexistent /etc/passwd /tmp no-such-program; do
        expected=$(runc_error "$program")
        echo "runc: $expected"
        [[ "$expected" == *'exec: "'"$program"'"'* ]]
        run cerb create -b "$BUNDLE" "$ID"
        echo "cerberus: status=$status $output"
        [ "$status" -eq 1 ]
        [[ "$expected" == *"${output#cerberus: }" ]]
        [ ! -e "$ROOT/$ID" ]
    done
}

@test "exec of a program that cannot run fails with runc's words" {
    set_args sleep 300
    runc --root "$RUNC_ROOT" run -d -b "$BUNDLE" "$ID" </dev/null >/dev/null 2>&1
    cerb run -d -b "$BUNDLE" "$ID"
    for program in /nonexistent /etc/passwd /tmp no-such-program; do
        runc --root "$RUNC_ROOT" --log "$BATS_TEST_TMPDIR/runc.log" --log-format json exec "$ID" "$program" 2>/dev/null && false
        expected=$(jq -r 'select(.level == "error") | .msg' "$BATS_TEST_TMPDIR/runc.log" | tail -n 1)
        rm -f "$BATS_TEST_TMPDIR/runc.log"
        run cerb exec "$ID" "$program"
        echo "runc: $expected; cerberus: $status $output"
        [ "$status" -ne 0 ]
        [[ "$expected" == *"${output#cerberus: }" ]]
    done
}

# both_fail_with PHRASE ARG...: the runc command and the cerberus command
# with these args (after --root) both fail, and both say PHRASE.
both_fail_with() {
    local phrase=$1
    shift
    run runc --root "$RUNC_ROOT" "$@"
    echo "runc: status=$status $output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"$phrase"* ]]
    run cerb "$@"
    echo "cerberus: status=$status $output"
    [ "$status" -ne 0 ]
    [[ "$output" == *"$phrase"* ]]
}

@test "the lifecycle errors engines match on read as runc's" {
    # Docker's and containerd's "not found": "container does not exist" and
    # "container not running" in the runtime's error.
    for command in "kill nosuch KILL" "delete nosuch" "state nosuch" "start nosuch"; do
        both_fail_with "container does not exist" $command
    done
    set_args true
    runc --root "$RUNC_ROOT" create -b "$BUNDLE" "$ID" </dev/null >/dev/null 2>&1
    runc --root "$RUNC_ROOT" start "$ID"
    cerb create -b "$BUNDLE" "$ID"
    cerb start "$ID"
    for _ in $(seq 50); do
        [ "$(container_status)" = stopped ] && [ "$(runc --root "$RUNC_ROOT" state "$ID" | jq -r .status)" = stopped ] && break
        sleep 0.1
    done
    both_fail_with "container not running" kill "$ID" KILL
    both_fail_with "cannot exec in a stopped container" exec "$ID" true
    both_fail_with "cannot start a container that has stopped" start "$ID"
}
