#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# pause/resume, update, ps and events act on the container's cgroup for real.

load helpers

setup() {
    setup_bundle
    edit_config '.root.readonly = false'
    # Counts in a file ten times a second: a frozen container stops counting.
    set_args sh -c 'i=0; while true; do i=$((i+1)); echo $i >/tmp/count; sleep 0.1; done'
}
teardown() { teardown_bundle; }

# cgroup_file CONTROLLER V1-FILE V2-FILE: the container's control file, in the
# controller's v1 hierarchy when the host has one, else in cgroup2.
cgroup_file() {
    local path="/cerberus-test/$ID"
    if [ -d "/sys/fs/cgroup/$1$path" ]; then
        echo "/sys/fs/cgroup/$1$path/$2"
    else
        echo "/sys/fs/cgroup$path/$3"
    fi
}

count() { cat "/proc/$INIT_PID/root/tmp/count"; }

@test "pause freezes every process of the container, resume thaws them" {
    start_container
    cerb exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$ID" sleep 600
    exec_pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
    cerb pause "$ID"
    [ "$(container_status)" = paused ]
    if [ -d /sys/fs/cgroup/freezer/cerberus-test ]; then
        [ "$(cat "$(cgroup_file freezer freezer.state)")" = FROZEN ]
        # The v1 freezer parks its tasks in uninterruptible sleep.
        grep -q '^State:.*D' /proc/$INIT_PID/status
        grep -q '^State:.*D' /proc/$exec_pid/status
    else
        grep -q '^frozen 1' "$(cgroup_file none none cgroup.events)"
    fi
    before=$(count)
    sleep 0.5
    [ "$(count)" = "$before" ]

    cerb resume "$ID"
    [ "$(container_status)" = running ]
    run ! grep -q '^State:.*D' "/proc/$exec_pid/status"
    sleep 0.5
    [ "$(count)" -gt "$before" ]
}

@test "pause and resume fail as runc's do" {
    start_container
    run cerb resume "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"container not paused"* ]]
    cerb pause "$ID"
    run cerb pause "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"container not running"* ]]
    # A paused container can still be killed and deleted.
    cerb delete --force "$ID"
    run cerb state "$ID"
    [ "$status" -ne 0 ]
    run cerb pause "$ID"
    [[ "$output" == *"does not exist"* ]]
}

@test "a created container can be paused and resumed" {
    cerb create -b "$BUNDLE" "$ID"
    cerb pause "$ID"
    [ "$(container_status)" = paused ]
    cerb resume "$ID"
    [ "$(container_status)" = created ]
}

@test "update writes memory, pids and cpu limits into the cgroup" {
    start_container
    cerb update --memory 64M --memory-swap 128M --pids-limit 42 --cpu-share 512 --cpu-quota 20000 \
        --cpu-period 100000 "$ID"
    [ "$(cat "$(cgroup_file pids pids.max pids.max)")" = 42 ]
    if [ -d /sys/fs/cgroup/memory/cerberus-test ]; then
        [ "$(cat "$(cgroup_file memory memory.limit_in_bytes x)")" = $((64 << 20)) ]
        [ "$(cat "$(cgroup_file memory memory.memsw.limit_in_bytes x)")" = $((128 << 20)) ] ||
            [ ! -e "$(cgroup_file memory memory.memsw.limit_in_bytes x)" ]
        [ "$(cat "$(cgroup_file cpu cpu.shares x)")" = 512 ]
        [ "$(cat "$(cgroup_file cpu cpu.cfs_quota_us x)")" = 20000 ]
    else
        [ "$(cat "$(cgroup_file memory x memory.max)")" = $((64 << 20)) ]
        [ "$(cat "$(cgroup_file cpu x cpu.max)")" = "20000 100000" ]
    fi
    # What is not named stays as it was.
    cerb update --pids-limit 43 "$ID"
    [ "$(cat "$(cgroup_file pids pids.max pids.max)")" = 43 ]
    [ "$(cerb events --stats "$ID" | jq .data.memory.usage.limit)" = $((64 << 20)) ]
}

@test "update --resources takes linux.resources JSON from a file or stdin" {
    start_container
    echo '{"pids": {"limit": 17}, "memory": {"limit": 33554432}}' >"$BATS_TEST_TMPDIR/resources.json"
    cerb update --resources "$BATS_TEST_TMPDIR/resources.json" "$ID"
    [ "$(cat "$(cgroup_file pids pids.max pids.max)")" = 17 ]
    [ "$(cerb events --stats "$ID" | jq .data.memory.usage.limit)" = 33554432 ]
    # As in runc, flags are ignored when --resources is given.
    echo '{"pids": {"limit": 18}}' | cerb update -r - --pids-limit 19 "$ID"
    [ "$(cat "$(cgroup_file pids pids.max pids.max)")" = 18 ]
    # The new limit holds: the container cannot fork past it.
    run cerb exec "$ID" probe fork 40
    [[ "$output" != *"40"* ]]
}

@test "update fails for bad values and stopped containers" {
    start_container
    run cerb update --memory lots "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"invalid value for memory"* ]]
    echo '{"pids": {"limit": "many"}}' >"$BATS_TEST_TMPDIR/bad.json"
    run cerb update -r "$BATS_TEST_TMPDIR/bad.json" "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"linux.resources.pids.limit"* ]]
    cerb kill "$ID" KILL
    for _ in $(seq 50); do [ "$(container_status)" = stopped ] && break; sleep 0.1; done
    run cerb update --pids-limit 5 "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"container not running"* ]]
}

@test "ps lists the container's processes, in a table or as JSON" {
    set_args sleep 600
    start_container
    cerb exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$ID" sleep 600
    exec_pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
    run cerb ps "$ID"
    [ "$status" -eq 0 ]
    [[ "${lines[0]}" == UID*PID*CMD* ]]
    [ "$(awk 'NR > 1 {print $2}' <<<"$output" | sort -n | tr '\n' ' ')" = "$(printf '%s\n' "$INIT_PID" "$exec_pid" | sort -n | tr '\n' ' ')" ]
    run cerb ps --format json "$ID"
    [ "$(jq -c 'sort' <<<"$output")" = "$(jq -c -n --argjson a "$INIT_PID" --argjson b "$exec_pid" '[$a, $b] | sort')" ]
    # Arguments after the id go to ps.
    run cerb ps "$ID" -o pid,comm
    [[ "${lines[0]}" =~ ^\ *PID\ +COMMAND$ ]]
    [[ "$output" == *"$exec_pid sleep"* ]]
    run cerb ps --format yaml "$ID"
    [ "$status" -ne 0 ]
}

@test "events --stats prints one runc-shaped stats object" {
    edit_config '.linux.resources.pids = {"limit": 99}'
    start_container
    run cerb events --stats "$ID"
    [ "$status" -eq 0 ]
    [ "${#lines[@]}" -eq 1 ]
    [ "$(jq -r '.type + " " + .id' <<<"$output")" = "stats $ID" ]
    [ "$(jq .data.pids.limit <<<"$output")" = 99 ]
    [ "$(jq .data.pids.current <<<"$output")" -ge 1 ]
    [ "$(jq .data.memory.usage.usage <<<"$output")" -gt 0 ]
    [ "$(jq .data.cpu.usage.total <<<"$output")" -gt 0 ]
    jq -e '.data.memory.raw | length > 0' <<<"$output"
}

@test "events streams stats every --interval until the container stops" {
    start_container
    cerb events --interval 200ms "$ID" >"$BATS_TEST_TMPDIR/events" &
    events=$!
    sleep 1
    cerb kill "$ID" KILL
    wait "$events"
    [ "$(jq -r .type "$BATS_TEST_TMPDIR/events" | sort -u)" = stats ]
    [ "$(wc -l <"$BATS_TEST_TMPDIR/events")" -ge 3 ]
    run cerb events --stats "$ID"
    [ "$status" -ne 0 ]
    [[ "$output" == *"is not running"* ]]
}

@test "events reports an OOM kill" {
    edit_config '.linux.resources.memory = {"limit": 16777216, "swap": 16777216}'
    start_container
    cerb events --interval 10s "$ID" >"$BATS_TEST_TMPDIR/events" &
    events=$!
    sleep 0.3
    # Doubles a string until the memory limit kills the shell.
    run cerb exec "$ID" sh -c 'a=x; while true; do a="$a$a"; done'
    [ "$status" -eq 137 ]
    for _ in $(seq 30); do grep -q oom "$BATS_TEST_TMPDIR/events" && break; sleep 0.1; done
    # The kernel picks the victims: a second OOM in the cgroup while the shell was dying once took the
    # init too (seen in dmesg on a loaded CI run), which stops the container.
    cerb kill "$ID" KILL || [ "$(cerb state "$ID" | jq -r .status)" = stopped ]
    wait "$events"
    [ "$(head -1 "$BATS_TEST_TMPDIR/events")" = "{\"type\":\"oom\",\"id\":\"$ID\"}" ]
}

# freeze_cgroup DIR-PATH 1|0: the cgroup's freezer, v1 when the host has one.
freeze_cgroup() {
    if [ -d /sys/fs/cgroup/freezer ]; then
        mkdir -p "/sys/fs/cgroup/freezer$1"
        echo "$([ "$2" = 1 ] && echo FROZEN || echo THAWED)" >"/sys/fs/cgroup/freezer$1/freezer.state"
    else
        mkdir -p "/sys/fs/cgroup$1"
        echo "$2" >"/sys/fs/cgroup$1/cgroup.freeze"
    fi
}

@test "create refuses a cgroup frozen beforehand and warns of one with processes, as runc's" {
    path="/cerberus-test/$ID"
    err="$BATS_TEST_TMPDIR/stderr"
    freeze_cgroup "$path" 1
    run cerb run -d -b "$BUNDLE" "$ID" </dev/null
    [ "$status" -eq 1 ]
    [[ "$output" == *"container's cgroup unexpectedly frozen"* ]]
    [ ! -e "$ROOT/$ID" ]
    # Control: thawed, the same cgroup takes the container, without a warning.
    # (Its output to a file: the container keeps what it inherits open.)
    freeze_cgroup "$path" 0
    cerb run -d -b "$BUNDLE" "$ID" </dev/null >/dev/null 2>"$err"
    [ "$(grep -c "not empty" "$err")" -eq 0 ]
    # A second container in that cgroup: allowed, with runc's warning.
    cerb run -d -b "$BUNDLE" "$ID-2" </dev/null >/dev/null 2>"$err"
    "$CERBERUS" --root "$ROOT" delete --force "$ID-2"
    grep -q "container's cgroup is not empty: [0-9]* process(es) found" "$err"
}
