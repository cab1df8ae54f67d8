#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# All six hook kinds run in order, with the state on stdin, and time out.

load helpers

setup() { setup_bundle; }
teardown() { teardown_bundle; }

# A hook script that appends its kind, the state's status and pid to a log.
make_hook() {
    cat > "$BATS_TEST_TMPDIR/hook.sh" <<HOOK
#!/bin/sh
state=\$(cat)
echo "\$1 \$(echo "\$state" | jq -r .status) \$(echo "\$state" | jq -r .id)" >> "$BATS_TEST_TMPDIR/hooks.log"
HOOK
    chmod +x "$BATS_TEST_TMPDIR/hook.sh"
}

@test "hooks run in the order of the runtime-spec with the state on stdin" {
    make_hook
    hook() { echo '{"path": "'"$BATS_TEST_TMPDIR/hook.sh"'", "args": ["hook.sh", "'"$1"'"], "env": ["PATH=/usr/bin:/bin"]}'; }
    edit_config ".hooks = {\"prestart\": [$(hook prestart)], \"createRuntime\": [$(hook createRuntime)], \"poststart\": [$(hook poststart)], \"poststop\": [$(hook poststop)]}"
    set_args true
    cerb create -b "$BUNDLE" "$ID"
    cerb start "$ID"
    for _ in $(seq 50); do [ "$(container_status)" = stopped ] && break; sleep 0.1; done
    cerb delete "$ID"
    run cat "$BATS_TEST_TMPDIR/hooks.log"
    [ "${lines[0]}" = "prestart created $ID" ]
    [ "${lines[1]}" = "createRuntime created $ID" ]
    [ "${lines[2]}" = "poststart running $ID" ]
    [ "${lines[3]}" = "poststop stopped $ID" ]
}

@test "createContainer and startContainer hooks run inside the container" {
    # createContainer runs before pivot_root, startContainer after it, in the container's namespaces.
    edit_config '.root.readonly = false | .hooks = {"createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "hostname > '"$BATS_TEST_TMPDIR"'/create-host"]}], "startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "hostname > /start-host"]}]}'
    run_container true
    [ "$status" -eq 0 ]
    [ "$(cat "$BATS_TEST_TMPDIR/create-host")" = cerberus ]
    [ "$(cat "$BUNDLE/rootfs/start-host")" = cerberus ]
}

@test "startContainer hooks run under the spec's seccomp filter" {
    # runc's order: a hook in the container is held to the filter the process gets.
    local hooks='.hooks = {"startContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "mkdir /tmp/by-hook"]}]}'
    edit_config ".root.readonly = false | $hooks"
    run_container true
    [ "$status" -eq 0 ] # control: no filter, the hook's mkdir goes through
    [ -d "$BUNDLE/rootfs/tmp/by-hook" ]
    rmdir "$BUNDLE/rootfs/tmp/by-hook"
    edit_config '.linux.seccomp = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_KILL"}]}'
    run_container true
    [ "$status" -ne 0 ]
    [[ "$output" == *"error running hook #0 (startContainer, /bin/sh): killed by signal 31 (bad system call)"* ]]
    [ ! -e "$BUNDLE/rootfs/tmp/by-hook" ]
}

@test "createContainer hooks run from the container's root, the runtime's hooks from the bundle" {
    # runc's order: a createContainer hook may name the container's files relative to its root.
    edit_config '.root.readonly = false | .hooks = {"createRuntime": [{"path": "/bin/sh", "args": ["sh", "-c", "pwd > '"$BATS_TEST_TMPDIR"'/runtime-cwd"]}], "createContainer": [{"path": "/bin/sh", "args": ["sh", "-c", "touch ./made-by-hook"]}]}'
    run_container true
    [ "$status" -eq 0 ]
    [ -f "$BUNDLE/rootfs/made-by-hook" ]
    [ ! -e "$BUNDLE/made-by-hook" ]
    [ "$(cat "$BATS_TEST_TMPDIR/runtime-cwd")" = "$(cd "$BUNDLE" && pwd -P)" ]
}

@test "a hook that exceeds its timeout is killed and fails create" {
    edit_config '.hooks = {"createRuntime": [{"path": "/bin/sleep", "args": ["sleep", "30"], "timeout": 1}]}'
    set_args true
    SECONDS=0
    run cerb create -b "$BUNDLE" "$ID"
    [ "$status" -eq 1 ]
    [[ "$output" == *"timed out after 1s"* ]]
    [ "$SECONDS" -lt 10 ]
    [ ! -e "$ROOT/$ID" ]
}
