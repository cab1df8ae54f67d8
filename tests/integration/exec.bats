#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# exec: the new process is in the container's namespaces, cgroup and root,
# takes the flags as runc does, and its exit status comes back.

load helpers

setup() {
    setup_bundle
    set_args sleep 600
}
teardown() { teardown_bundle; }

@test "exec'd process is in every namespace of the init" {
    start_container
    run cerb exec "$ID" sh -c 'for ns in mnt uts ipc net pid cgroup user; do echo "$ns $(readlink /proc/self/ns/$ns)"; done'
    [ "$status" -eq 0 ]
    for ns in mnt uts ipc net pid cgroup user; do
        [[ "$output" == *"$ns $(readlink /proc/$INIT_PID/ns/$ns)"* ]]
    done
    # Not the host's: the default spec creates all of these but user.
    [ "$(readlink /proc/$INIT_PID/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ]
    [ "$(readlink /proc/$INIT_PID/ns/pid)" != "$(readlink /proc/self/ns/pid)" ]
}

@test "exec'd process is in the container's cgroup, pid namespace and root" {
    start_container
    cerb exec -d --pid-file "$BATS_TEST_TMPDIR/exec.pid" "$ID" sleep 600
    pid=$(cat "$BATS_TEST_TMPDIR/exec.pid")
    [ "$(cat /proc/$pid/cgroup)" = "$(cat /proc/$INIT_PID/cgroup)" ]
    for ns in mnt uts ipc net pid cgroup; do
        [ "$(readlink /proc/$pid/ns/$ns)" = "$(readlink /proc/$INIT_PID/ns/$ns)" ]
    done
    [ "$(readlink /proc/$pid/root)" = "$(readlink /proc/$INIT_PID/root)" ]
    # In the container's pid namespace it is neither the init nor a host pid.
    inner=$(awk '/^NSpid:/ {print $3}' /proc/$pid/status)
    [ -n "$inner" ] && [ "$inner" -gt 1 ]
    run cerb ps --format json "$ID"
    [ "$(jq 'sort' <<<"$output")" = "$(jq -n --argjson a "$INIT_PID" --argjson b "$pid" '[$a, $b] | sort')" ]
}

@test "exec --cgroup puts the process in a sub-cgroup of the container's, refused outside it" {
    start_container
    local memory=""
    [ "$(cgroup_layout)" = unified ] || memory=/sys/fs/cgroup/memory/cerberus-test/$ID
    # A path alone names the sub-cgroup in every hierarchy the container is in.
    for dir in /sys/fs/cgroup/cerberus-test/$ID /sys/fs/cgroup/*/cerberus-test/$ID; do
        [ -d "$dir" ] || continue
        mkdir "$dir/sub"
        if [ -f "$dir/cpuset.cpus" ]; then # a new v1 cpuset starts empty, and takes no task
            cat "$dir/cpuset.cpus" > "$dir/sub/cpuset.cpus"
            cat "$dir/cpuset.mems" > "$dir/sub/cpuset.mems"
        fi
    done
    cerb exec -d --cgroup sub --pid-file "$BATS_TEST_TMPDIR/all.pid" "$ID" sleep 600
    all=$(cat "$BATS_TEST_TMPDIR/all.pid")
    grep -qx "0::/cerberus-test/$ID/sub" /proc/$all/cgroup
    if [ -n "$memory" ]; then
        grep -q ":memory:/cerberus-test/$ID/sub$" /proc/$all/cgroup
        # One controller's hierarchy only: the rest stay in the container's own cgroup.
        cerb exec -d --cgroup memory:sub --pid-file "$BATS_TEST_TMPDIR/memory.pid" "$ID" sleep 600
        one=$(cat "$BATS_TEST_TMPDIR/memory.pid")
        grep -q ":memory:/cerberus-test/$ID/sub$" /proc/$one/cgroup
        grep -qx "0::/cerberus-test/$ID" /proc/$one/cgroup
    fi
    # Control: without --cgroup, the container's own.
    cerb exec -d --pid-file "$BATS_TEST_TMPDIR/own.pid" "$ID" sleep 600
    grep -qx "0::/cerberus-test/$ID" /proc/$(cat "$BATS_TEST_TMPDIR/own.pid")/cgroup
    local before
    before=$(cerb ps --format json "$ID" | jq length)
    run cerb exec --cgroup .. "$ID" true
    [ "$status" -ne 0 ]
    [[ "$output" == *"--cgroup: .. is not a sub cgroup path"* ]]
    run cerb exec --cgroup sub/../../x "$ID" true
    [[ "$output" == *"is not a sub cgroup path"* ]]
    run cerb exec --cgroup missing "$ID" true
    [ "$status" -ne 0 ]
    [[ "$output" == *"/cerberus-test/$ID/missing/cgroup.procs: no such file or directory"* ]]
    run cerb exec --cgroup whaaat:/ "$ID" true
    [ "$status" -ne 0 ]
    [[ "$output" == *"unknown controller whaaat"* ]]
    run cerb exec --cgroup memory:a --cgroup b "$ID" true
    [[ "$output" == *"invalid --cgroup argument: b (missing <controller>: prefix)"* ]]
    [ "$(cerb ps --format json "$ID" | jq length)" -eq "$before" ] # nothing started
}

@test "exit status and death by signal come back" {
    start_container
    run cerb exec "$ID" sh -c 'exit 7'
    [ "$status" -eq 7 ]
    run cerb exec "$ID" sh -c 'kill -TERM $$'
    [ "$status" -eq 143 ]
    run cerb exec "$ID" true
    [ "$status" -eq 0 ]
}

@test "--env, --cwd, --user and --additional-gids change the config's process" {
    edit_config '.process.env += ["FROM_CONFIG=1", "OVERRIDDEN=old"]'
    start_container
    run cerb exec -e FOO=bar -e OVERRIDDEN=new --cwd /tmp --user 1000:1001 -g 2000 -g 2001 "$ID" \
        sh -c 'echo "$FOO $FROM_CONFIG $OVERRIDDEN $(pwd)"; probe ids'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "bar 1 new /tmp" ]
    [ "${lines[1]}" = "uid=1000 gid=1001 groups=2000,2001" ]
    run cerb exec -u 1234 "$ID" probe ids
    [ "$output" = "uid=1234 gid=0 groups=" ]
}

@test "--process runs the process.json as written" {
    start_container
    cat >"$BATS_TEST_TMPDIR/process.json" <<'EOF'
{"args": ["sh", "-c", "echo $GREETING from $(pwd); probe ids"], "env": ["GREETING=hello", "PATH=/bin"],
 "cwd": "/proc", "user": {"uid": 5, "gid": 6}}
EOF
    run cerb exec --process "$BATS_TEST_TMPDIR/process.json" "$ID"
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "hello from /proc" ]
    [ "${lines[1]}" = "uid=5 gid=6 groups=" ]
}

@test "--cap adds a capability, --no-new-privs sets no_new_privs" {
    edit_config '.process.noNewPrivileges = false'
    start_container
    run cerb exec "$ID" probe raw-socket
    [[ "$output" == "errno=1 "* ]]
    run cerb exec --cap CAP_NET_RAW "$ID" probe raw-socket
    [ "$output" = ok ]
    run cerb exec "$ID" grep NoNewPrivs /proc/self/status
    [[ "$output" == *"0" ]]
    run cerb exec --no-new-privs "$ID" grep NoNewPrivs /proc/self/status
    [[ "$output" == *"1" ]]
}

@test "--preserve-fds passes the engine's descriptors, no others leak" {
    start_container
    run cerb exec "$ID" probe fds 3</dev/null 4</dev/null
    [ "$output" = "fds=0" ]
    run cerb exec --preserve-fds 2 "$ID" probe fds 3</dev/null 4</dev/null
    [ "$output" = "fd3 fd4 fds=2" ]
}

@test "--tty hands the terminal to --console-socket" {
    start_container
    sock="$BATS_TEST_TMPDIR/console.sock"
    "$RECVTTY" "$sock" >"$BATS_TEST_TMPDIR/tty.out" &
    receiver=$!
    for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
    cerb exec --detach --tty --console-socket "$sock" "$ID" sh -c 'tty; echo on-the-tty'
    wait "$receiver"
    grep -q '^/dev/pts/' "$BATS_TEST_TMPDIR/tty.out"
    grep -q 'on-the-tty' "$BATS_TEST_TMPDIR/tty.out"
    run cerb exec --detach --tty "$ID" true
    [ "$status" -eq 255 ]
    [[ "$output" == *"--console-socket"* ]]
}

@test "--tty in the foreground without --console-socket: the runtime proxies the pty (the user's), as runc's exec does" {
    start_container
    run cerb exec --tty "$ID" sh -c 'tty; echo in-pty; exit 5' </dev/null
    [ "$status" -eq 5 ]
    [[ "${lines[0]}" == "/dev/pts/"* ]]
    [[ "${lines[1]}" == "in-pty"* ]]
    run cerb exec --tty --user 1000:100 "$ID" sh -c 'stat -c %u:%g $(tty)' </dev/null
    [[ "$output" == "1000:5"* ]]
    run cerb exec --tty "$ID" sh -c 'stat -c %u:%g $(tty)' </dev/null
    [[ "$output" == "0:5"* ]]
    # Control: without --tty the process has no terminal.
    run cerb exec "$ID" sh -c 'tty' </dev/null
    [ "$status" -ne 0 ]
    [[ "$output" == *"not a tty"* ]]
}

@test "the container's seccomp profile binds exec'd processes" {
    edit_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW",
        "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}'
    start_container
    run cerb exec "$ID" probe mkdir /tmp/denied
    [ "$output" = "errno=13 (EACCES)" ]
}

@test "exec works in a created container and in a user namespace" {
    chown -R 100000:100000 "$BUNDLE/rootfs"
    # The container's root must reach its rootfs through bats' private directories.
    for dir in "$BUNDLE" "$BATS_TEST_TMPDIR" "$BATS_RUN_TMPDIR" "$(dirname "$BATS_TEST_TMPDIR")"; do
        chmod o+x "$dir"
    done
    edit_config '.linux.namespaces += [{"type": "user"}]
        | .linux.uidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]
        | .linux.gidMappings = [{"containerID": 0, "hostID": 100000, "size": 65536}]'
    cerb create -b "$BUNDLE" "$ID"
    [ "$(container_status)" = created ]
    pid=$(cerb state "$ID" | jq .pid)
    run cerb exec "$ID" sh -c 'readlink /proc/self/ns/user; cat /proc/self/uid_map; id -u'
    [ "$status" -eq 0 ]
    [ "${lines[0]}" = "$(readlink /proc/$pid/ns/user)" ]
    [[ "${lines[1]}" == *"0"*"100000"*"65536" ]]
    [ "${lines[2]}" = 0 ]
    [ "$(container_status)" = created ]
}

@test "exec fails as runc's does, with 255 (the process's own statuses are in exit status and death by signal)" {
    run cerb exec nonexistent-container true
    [ "$status" -eq 255 ]
    [[ "$output" == *"does not exist"* ]]
    start_container
    run cerb exec "$ID"
    [ "$status" -eq 255 ]
    [[ "$output" == *"process args cannot be empty"* ]]
    run cerb exec "$ID" no-such-program
    [ "$status" -eq 255 ]
    [[ "$output" == *'exec: "no-such-program": executable file not found in $PATH'* ]]
    run cerb exec --pid-file /nonexistent/dir/pid "$ID" true
    [ "$status" -eq 255 ]
    [[ "$output" == *"/nonexistent/dir/pid"* ]]
    run cerb exec --cwd relative "$ID" true
    [ "$status" -eq 255 ]
    [[ "$output" == *"cwd must be an absolute path"* ]]
    cerb pause "$ID"
    run cerb exec "$ID" true
    [ "$status" -eq 255 ]
    [[ "$output" == *"cannot exec in a paused container"* ]]
    cerb resume "$ID"
    cerb kill "$ID" KILL
    for _ in $(seq 50); do [ "$(container_status)" = stopped ] && break; sleep 0.1; done
    run cerb exec "$ID" true
    [ "$status" -eq 255 ]
    [[ "$output" == *"cannot exec in a stopped container"* ]]
}
