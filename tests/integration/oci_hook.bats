#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# cerberus-hook (oci-hooks/) as runc runs it: createRuntime and poststop hooks
# in the bundle's config.json, the OCI state on stdin (docs/engines/oci-hook.md).

load helpers

: "${HOOK:?set HOOK to the cerberus-hook binary}"

setup() {
    command -v runc >/dev/null || skip "runc is not installed"
    setup_bundle
    HOOK_ROOT="$BATS_TEST_TMPDIR/hook-root"
    RUNC_ROOT="$BATS_TEST_TMPDIR/runc-root"
    hook() { echo '{"path": "'"$HOOK"'", "args": ["cerberus-hook", "--root", "'"$HOOK_ROOT"'", "'"$1"'"]}'; }
    edit_config ".hooks = {\"createRuntime\": [$(hook create-runtime)], \"poststop\": [$(hook poststop)]}"
}

teardown() {
    runc --root "$RUNC_ROOT" delete --force "$ID" >/dev/null 2>&1 || true
    teardown_bundle
}

runc_run() {
    set_args "$@"
    run runc --root "$RUNC_ROOT" run --bundle "$BUNDLE" "$ID"
    echo "status=$status output: $output"
}

@test "oci hook: a container without a policy runs untouched, and the hook keeps no record" {
    runc_run echo hello-under-runc
    [ "$status" -eq 0 ]
    [[ "$output" == *hello-under-runc* ]]
    [ -z "$(ls -A "$HOOK_ROOT" 2>/dev/null)" ]
}

@test "oci hook: a policy is enforced under runc, or the hook fails closed and runc refuses the container" {
    runc_run probe connect tcp 203.0.113.9 443
    [ "$output" = "errno=101 (ENETUNREACH)" ] # the control: no policy, no hook record
    runc --root "$RUNC_ROOT" delete --force "$ID" >/dev/null 2>&1
    edit_config '.annotations = {"io.cerberus.policy": "{\"allowed_hosts\": [\"192.0.2.1:443\"]}"}'
    run runc --root "$RUNC_ROOT" run --bundle "$BUNDLE" "$ID"
    echo "status=$status output: $output"
    if [[ "$output" == *"refusing to run the container unprotected"* ]]; then
        [ "$status" -ne 0 ]
        [[ "$output" == *"cerberus-hook: "* ]]
        [[ "$output" != *errno=* ]] # the process never ran
        [ -z "$(ls -A "$HOOK_ROOT" 2>/dev/null)" ]
    else
        [[ "$output" == *"errno=1 (EPERM)"* ]]
    fi
}

@test "oci hook: a bad policy makes runc refuse the container, with the field named" {
    edit_config '.annotations = {"io.cerberus.policy": "{\"allowed_hosts\": [\"10.0.0.0/33\"]}"}'
    runc_run echo never
    [ "$status" -ne 0 ]
    # runc's log line escapes the quotes around the CIDR.
    [[ "$output" == *"cerberus-hook: $BUNDLE/config.json: annotation io.cerberus.policy: policy.allowed_hosts[0]: bad CIDR"* ]]
    [[ "$output" != *never* ]]
    [ -z "$(ls -A "$HOOK_ROOT" 2>/dev/null)" ]
}

@test "oci hook: host names, which need the runtime's DNS gate, are refused, the entry named" {
    edit_config '.annotations = {"io.cerberus.policy": "{\"allowed_hosts\": [\"192.0.2.1:443\", \"api.example.org:443\"]}"}'
    runc_run echo never
    [ "$status" -ne 0 ]
    [[ "$output" == *"policy.allowed_hosts[1]: host names need the cerberus runtime"* ]]
    [[ "$output" != *never* ]]
    [ -z "$(ls -A "$HOOK_ROOT" 2>/dev/null)" ]
    # Control: the same policy without the name runs (or, where this kernel refuses the BPF LSM, is
    # refused for that, not for a name).
    edit_config '.annotations = {"io.cerberus.policy": "{\"allowed_hosts\": [\"192.0.2.1:443\"]}"}'
    runc_run echo ran
    [[ "$output" != *"host names need"* ]]
    [[ "$output" == *ran* || "$output" == *"refusing to run the container unprotected"* ]]
}

@test "oci hook: a config the hook cannot change is refused: noNewPrivileges, then forbidden caps" {
    edit_config '.process.noNewPrivileges = false | .annotations = {"io.cerberus.policy": "{\"forbidden_caps\": [\"CAP_KILL\"]}"}'
    runc_run echo never
    [ "$status" -ne 0 ]
    [[ "$output" == *"a hook cannot change the container's config: process.noNewPrivileges: false"* ]]
    edit_config '.process.noNewPrivileges = true'
    runc_run echo never
    [ "$status" -ne 0 ]
    [[ "$output" == *"process.capabilities.bounding: CAP_KILL is in policy.forbidden_caps"* ]]
    [ -z "$(ls -A "$HOOK_ROOT" 2>/dev/null)" ]
}

@test "oci hook: poststop, given runc's state of a stopped container (no pid), removes the record" {
    # A record as a createRuntime that died before writing the cgroup id leaves it.
    mkdir -p "$HOOK_ROOT/$ID"
    runc_run true
    [ "$status" -eq 0 ]
    [ ! -e "$HOOK_ROOT/$ID" ]
}

@test "oci hook: usage and state errors" {
    run "$HOOK"
    [ "$status" -eq 1 ]
    [[ "$output" == *"no stage given"* ]]
    run sh -c "echo '{\"id\": \"x\"' | '$HOOK' create-runtime"
    [ "$status" -eq 1 ]
    [[ "$output" == *"cerberus-hook: the OCI state on stdin: "* ]]
    run sh -c "echo '{\"id\": \"x\", \"bundle\": \"$BUNDLE\"}' | '$HOOK' --root '$HOOK_ROOT' create-runtime"
    [ "$status" -eq 1 ]
    [[ "$output" == *"has no pid"* ]]
}
