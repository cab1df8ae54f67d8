#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Landlock's file and exec denials reach the container's trail, read from the kernel audit log by the
# collector; where kernel audit is off, the trail's first line says which denials it cannot report and why.
# Learn mode reads such a trail as a BPF LSM one: a denied write goes to allowed_paths.
# Kernel audit is host-wide: each test puts back the audit state it found (cerberus-audit-switch).

load helpers

setup_file() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    "$CERBERUS" check | grep -q 'Landlock ABI: *\([7-9]\|[1-9][0-9]\)' || skip "Landlock logs denials from ABI 7 on"
    export AUDIT_SWITCH="$(dirname "$CERBERUS")/cerberus-audit-switch"
    "$AUDIT_SWITCH" get >/dev/null || skip "kernel audit cannot be read here"
}

setup() {
    setup_bundle
    AUDIT_BEFORE="$("$AUDIT_SWITCH" get)"
    AUDIT_DIR="$BATS_TEST_TMPDIR/audit"
    TRAIL="$AUDIT_DIR/$ID.jsonl"
    echo 'not for the agent' > "$BUNDLE/rootfs/secret.txt"
    cp "$PROBE" "$BUNDLE/rootfs/bin/tool" # a program not in allowed_bins
    set_args sh -c 'cat /secret.txt; echo "cat=$?"; /bin/tool; echo "tool=$?"'
}

teardown() {
    teardown_bundle
    [ "$("$AUDIT_SWITCH" get)" = "$AUDIT_BEFORE" ] || "$AUDIT_SWITCH" set "$AUDIT_BEFORE"
}

policed() {
    edit_config '.annotations["io.cerberus.policy"] = "{\"enforcement\": \"landlock\", \"allowed_paths\": [\"/tmp\"], \"read_only_paths\": [\"/bin\"], \"allowed_bins\": [\"/bin/busybox\"]}"'
}

# The collector of this layout is host-wide: one started by another build of the same layout (another
# worktree) runs that build's code. Waits for such a one to leave (it does 10 s after its last container).
# The runtime runs from a sealed copy of its binary, so the copy's content tells the build.
own_collector_or_none() {
    local lock pid
    lock="$("$CERBERUS" check | sed -n 's/^audit run dir: *\([^ ]*\).*/\1/p')/collector.lock"
    for _ in $(seq 90); do
        pid="$(cat "$lock" 2>/dev/null || true)"
        if [ -z "$pid" ] || ! [ -e "/proc/$pid" ] || cmp -s "/proc/$pid/exe" "$CERBERUS"; then
            return 0
        fi
        sleep 1
    done
    skip "another build's audit collector serves this host"
}

# denials_after_wait N: the trail's denial lines, once there are N of them (5 s at most).
denials_after_wait() {
    for _ in $(seq 50); do
        [ "$(jq -c 'select(.type == "denial")' "$TRAIL" 2>/dev/null | wc -l)" -ge "$1" ] && break
        sleep 0.1
    done
    jq -c 'select(.type == "denial")' "$TRAIL"
}

@test "file and exec denials reach the trail with path, op and comm; without the policy both work" {
    own_collector_or_none
    "$AUDIT_SWITCH" set 1
    # Control: no policy, both work and no trail is written.
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [[ "$output" == *'cat=0'* ]]
    [[ "$output" != *'tool=126'* ]]
    [ ! -e "$TRAIL" ]
    cerb delete "$ID" 2>/dev/null || true

    policed
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [[ "$output" == *'cat=1'* ]]
    [[ "$output" == *'tool=126'* ]]
    [[ "$output" == *'Permission denied'* ]]
    # run has deleted the container: delete returns once the trail holds every record, no waiting here.
    denials="$(jq -c 'select(.type == "denial")' "$TRAIL")"
    echo "$denials"
    [ "$(echo "$denials" | wc -l)" -eq 2 ]
    echo "$denials" | jq -se --arg id "$ID" 'map(select(.id == $id and .op == "open" and .target == "/secret.txt"
        and .comm == "cat" and .pid > 0 and .errno == 13 and .rule == "not in allowed_paths or read_only_paths"))
        | length == 1'
    echo "$denials" | jq -se --arg id "$ID" 'map(select(.id == $id and .op == "exec" and .target == "/bin/tool"
        and .comm == "sh" and .errno == 13 and .rule == "not in allowed_bins")) | length == 1'
    head -1 "$TRAIL" | jq -e '.type == "start" and (.not_reported | index("allowed_paths, read_only_paths") | not)
        and (.not_reported | index("allowed_bins") | not)'
}

@test "with kernel audit off the trail's first line says which denials it cannot report, and why" {
    [ "$AUDIT_BEFORE" != 2 ] || skip "kernel audit is locked on here"
    own_collector_or_none
    "$AUDIT_SWITCH" set 0
    policed
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [[ "$output" == *'cat=1'* ]]
    [[ "$output" == *'tool=126'* ]]
    head -1 "$TRAIL"
    head -1 "$TRAIL" | jq -e '.type == "start" and (.not_reported | index("allowed_paths, read_only_paths")) and (.not_reported | index("allowed_bins"))
        and (.why_not_reported["allowed_paths, read_only_paths"] | test("kernel audit, which is disabled"))
        and (.why_not_reported.allowed_bins | test("auditctl -e 1"))'
    sleep 1.5
    [ "$(jq -c 'select(.type == "denial")' "$TRAIL" | wc -l)" -eq 0 ]
}

@test "learn mode over a landlock trail: the denied write is learned as allowed_paths, the read as read_only_paths; the learned policy lets both through" {
    own_collector_or_none
    "$AUDIT_SWITCH" set 1
    # /dev is a mount of its own: outside allowed_paths Landlock, not a read-only remount, refuses the write.
    set_args sh -c 'echo new > /dev/null; echo "write=$?"; cat /secret.txt; echo "read=$?"'
    edit_config '.annotations["io.cerberus.policy"] = "{\"enforcement\": \"landlock\", \"allowed_paths\": [\"/tmp\"], \"read_only_paths\": [\"/bin\"]}"'
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [[ "$output" == *'write=1'* ]]
    [[ "$output" == *'read=1'* ]]
    denials_after_wait 2
    jq -se 'map(select(.type == "denial" and .op == "open")) | map(.target + " " + .access) | sort == ["/dev/null write", "/secret.txt read"]' "$TRAIL"
    cerb delete "$ID" 2>/dev/null || true

    run "$CERBERUS" policy learn --trail "$TRAIL"
    echo "$output"
    [ "$status" -eq 0 ]
    learned="$(echo "$output" | jq -c 'del(._learned)')"
    echo "$learned" | jq -e '(.allowed_paths | index("/dev/null")) and (.read_only_paths | index("/secret.txt"))
        and (.read_only_paths | index("/dev/null") | not)'
    # The control: under the learned policy both work.
    edit_config --arg p "$learned" '.annotations["io.cerberus.policy"] = ($p | fromjson | .enforcement = "landlock" | tojson)'
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [[ "$output" == *'write=0'* ]]
    [[ "$output" == *'read=0'* ]]
}
