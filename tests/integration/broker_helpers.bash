# SPDX-License-Identifier: Apache-2.0
# What the command broker's tests share (broker.bats, broker_ask.bats): a
# policy in the bundle, a policed run, its trail, the broker's pid.

with_policy() {
    edit_config --arg p "$1" '.annotations["io.cerberus.policy"] = $p'
}

# run_policed ARG...: the container runs them (foreground); its trail is $AUDIT/$ID.jsonl.
run_policed() {
    set_args "$@"
    run cerb --audit-dir "$AUDIT" run -b "$BUNDLE" "$ID"
    echo "status=$status output: $output"
}

trail_text() {
    cerb --audit-dir "$AUDIT" events --denials "$ID"
}

# The broker's pid, from its lock file, when that process is the broker (this build's layout).
broker_pid() {
    local lock pid
    for lock in /run/cerberus-broker/*/broker.lock; do
        pid=$(cat "$lock" 2>/dev/null) || continue
        if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q '^cerberus command-broker'; then
            echo "$pid"
            return
        fi
    done
    return 1
}
