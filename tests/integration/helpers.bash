# SPDX-License-Identifier: Apache-2.0
# Shared set-up for the integration tests: a busybox bundle per test, made
# with `cerberus spec`, and helpers to edit its config.json.

# `run !` (a command expected to fail) is checked; a bare `! cmd` inside a test is not.
bats_require_minimum_version 1.5.0

: "${CERBERUS:?set CERBERUS to the binary under test}"
: "${PROBE:?set PROBE to the cerberus-probe binary}"

setup_bundle() {
    ROOT="$BATS_TEST_TMPDIR/state"
    BUNDLE="$BATS_TEST_TMPDIR/bundle"
    ID="cerb-test-$$-${BATS_TEST_NUMBER}"
    mkdir -p "$BUNDLE/rootfs/bin" "$ROOT"
    cp /bin/busybox "$BUNDLE/rootfs/bin/busybox"
    for applet in sh cat echo ls id hostname sleep true false mount grep wc touch mkdir stat ulimit env pwd head readlink; do
        ln -sf busybox "$BUNDLE/rootfs/bin/$applet"
    done
    cp "$PROBE" "$BUNDLE/rootfs/bin/probe"
    mkdir -p "$BUNDLE/rootfs/proc" "$BUNDLE/rootfs/sys" "$BUNDLE/rootfs/dev" "$BUNDLE/rootfs/etc" "$BUNDLE/rootfs/tmp"
    (cd "$BUNDLE" && "$CERBERUS" spec)
    # Tests run without a terminal and in a fresh cgroup of their own.
    edit_config '.process.terminal = false | .linux.cgroupsPath = "/cerberus-test/'"$ID"'"'
}

teardown_bundle() {
    "$CERBERUS" --root "$ROOT" delete --force "$ID" >/dev/null 2>&1 || true
}

# edit_config [JQ-OPTIONS] JQ-FILTER: rewrites config.json with jq.
edit_config() {
    local tmp="$BUNDLE/config.json.tmp"
    jq "$@" "$BUNDLE/config.json" > "$tmp" && mv "$tmp" "$BUNDLE/config.json"
}

# set_args ARG...: the container's process.args.
set_args() {
    edit_config ".process.args = $(printf '%s\n' "$@" | jq -R . | jq -s -c .)"
}

cerb() {
    "$CERBERUS" --root "$ROOT" "$@"
}

# run_container ARG...: `cerberus run` with these args; output in $output.
run_container() {
    set_args "$@"
    run cerb run -b "$BUNDLE" "$ID"
    echo "status=$status output: $output"
}

# start_container: the bundle's container running detached; its init's pid in $INIT_PID.
start_container() {
    cerb run -d -b "$BUNDLE" "$ID" </dev/null
    INIT_PID=$(cerb state "$ID" | jq .pid)
}

container_status() {
    cerb state "$ID" | jq -r .status
}

# unified: cgroup2 alone at /sys/fs/cgroup; hybrid: v1 hierarchies beside it.
cgroup_layout() {
    if grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then echo unified; else echo hybrid; fi
}
