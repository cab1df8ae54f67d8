#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# Landlock's file and exec denials reach the container's trail: from the call observer (failed calls
# judged against the policy) whatever the audit state, paired with Landlock's own records from the kernel
# audit log where audit is on, so that each denial is one line even when audit is switched while the
# container runs. Audit mode holds the policy's calls for the collector and lets them through.
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
        and .comm == "cat" and .pid > 0 and .errno == 13 and .rule == "not in allowed_paths"))
        | length == 1'
    echo "$denials" | jq -se --arg id "$ID" 'map(select(.id == $id and .op == "exec" and .target == "/bin/tool"
        and .comm == "sh" and .errno == 13 and .rule == "not in allowed_bins")) | length == 1'
    head -1 "$TRAIL" | jq -e '.type == "start" and (.not_reported | index("allowed_paths, read_only_paths") | not)
        and (.not_reported | index("allowed_bins") | not)'
}

@test "with kernel audit off the call observer reports the denials: pid, comm, path and rule; an allowed read beside them is not" {
    [ "$AUDIT_BEFORE" != 2 ] || skip "kernel audit is locked on here"
    own_collector_or_none
    "$AUDIT_SWITCH" set 0
    policed
    set_args sh -c 'head -c 4 /bin/busybox >/tmp/x; echo "allowed=$?"; cat /secret.txt; echo "cat=$?"; /bin/tool; echo "tool=$?"'
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [[ "$output" == *'allowed=0'* ]]
    [[ "$output" == *'cat=1'* ]]
    [[ "$output" == *'tool=126'* ]]
    head -1 "$TRAIL" | jq -e '.type == "start" and (.not_reported | index("allowed_paths, read_only_paths") | not)
        and (.not_reported | index("allowed_bins") | not)'
    # run has deleted the container: delete returns once the trail holds every record.
    denials="$(jq -c 'select(.type == "denial")' "$TRAIL")"
    echo "$denials"
    # The BPF LSM backend's record of the same refusals.
    echo "$denials" | jq -se --arg id "$ID" 'map(select(.id == $id and .op == "open" and .target == "/secret.txt"
        and .access == "read" and .comm == "cat" and .pid > 0 and .errno == 13 and .rule == "not in allowed_paths"))
        | length == 1'
    echo "$denials" | jq -se --arg id "$ID" 'map(select(.id == $id and .op == "exec" and .target == "/bin/tool"
        and .comm == "sh" and .pid > 0 and .errno == 13 and .rule == "not in allowed_bins")) | length == 1'
    # The control: the allowed read of /bin/busybox is in no record.
    echo "$denials" | jq -se 'map(select(.target == "/bin/busybox")) | length == 0'
    run "$CERBERUS" --audit-dir "$AUDIT_DIR" events --denials "$ID"
    echo "$output"
    [[ "$output" == *'/secret.txt'* ]]
}

@test "audit mode with kernel audit off: the accesses enforce would deny run and are recorded; learn's policy then enforces with no denial of the same run" {
    [ "$AUDIT_BEFORE" != 2 ] || skip "kernel audit is locked on here"
    own_collector_or_none
    "$AUDIT_SWITCH" set 0
    mkdir "$BUNDLE/rootfs/data"
    edit_config '.root.readonly = false' # audit mode mounts nothing: the spec's root as it is
    set_args sh -c 'head -c 4 /bin/busybox >/tmp/x; echo "allowed=$?"; cat /secret.txt >/tmp/y; echo "cat=$?"; echo x > /data/made.txt; echo "write=$?"; /bin/tool; echo "tool=$?"'
    edit_config '.annotations["io.cerberus.policy"] = "{\"enforcement\": \"landlock\", \"mode\": \"audit\", \"allowed_paths\": [\"/tmp\"], \"read_only_paths\": [\"/bin\"], \"allowed_bins\": [\"/bin/busybox\"]}"'
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *'allowed=0'* ]]
    [[ "$output" == *'cat=0'* ]]
    [[ "$output" == *'write=0'* ]]
    [[ "$output" != *'tool=126'* ]]
    records="$(jq -c 'select(.type == "denial")' "$TRAIL")"
    echo "$records"
    echo "$records" | jq -se 'map(select(.verdict == "audit" and .op == "open" and .target == "/secret.txt"
        and .comm == "cat" and .pid > 0)) | length >= 1'
    echo "$records" | jq -se 'map(select(.verdict == "audit" and .target == "/data/made.txt")) | length >= 1'
    echo "$records" | jq -se 'map(select(.verdict == "audit" and .op == "exec" and .target == "/bin/tool"
        and .rule == "not in allowed_bins")) | length == 1'
    # The control: what the policy allows is not recorded.
    echo "$records" | jq -se 'map(select(.target == "/bin/busybox")) | length == 0'
    echo "$records" | jq -se 'map(select(.verdict != "audit")) | length == 0'

    run "$CERBERUS" policy learn --trail "$TRAIL"
    echo "$output"
    [ "$status" -eq 0 ]
    learned="$(echo "$output" | jq -c 'del(._learned)')"
    echo "$learned" | jq -e '.mode == "enforce" and (.read_only_paths | index("/secret.txt"))
        and (.allowed_paths | index("/data")) and (.allowed_bins | index("/bin/tool"))'
    # The learned policy enforces, and the same run has no denial.
    rm -f "$TRAIL" "$BUNDLE/rootfs/data/made.txt"
    cerb delete "$ID" 2>/dev/null || true
    edit_config --arg p "$learned" '.annotations["io.cerberus.policy"] = ($p | fromjson | .enforcement = "landlock" | tojson)'
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [[ "$output" == *'cat=0'* ]]
    [[ "$output" == *'write=0'* ]]
    [[ "$output" != *'tool=126'* ]]
    jq -se 'map(select(.type == "start" and .mode == "enforce")) | length == 1' "$TRAIL"
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

# switched_run BEFORE AFTER: a policed container created with kernel audit at BEFORE, audit switched to AFTER
# while it runs, then the allowed read, and a denied read and a denied exec; the pids of the processes that
# read in ALLOWED_PID and DENIED_PID.
switched_run() {
    "$AUDIT_SWITCH" set "$1"
    policed
    echo 'for the agent' > "$BUNDLE/rootfs/bin/allowed.txt"
    set_args sleep 600
    edit_config '.linux.namespaces |= map(select(.type != "pid"))' # the trail's pids are the host's
    cerb --audit-dir "$AUDIT_DIR" run -d -b "$BUNDLE" "$ID" </dev/null
    "$AUDIT_SWITCH" set "$2"
    [ "$("$AUDIT_SWITCH" get)" = "$2" ]
    local out="$BATS_TEST_TMPDIR/exec.out"
    cerb exec "$ID" sh -c 'echo "pid=$$"; cat /bin/allowed.txt; echo "allowed=$?"' >"$out" 2>&1
    ALLOWED_PID="$(sed -n 's/^pid=//p' "$out")"
    grep -qx 'allowed=0' "$out"
    # The denied read by the shell itself, the denied exec by a child of it; the shell, which made the
    # process's Landlock domain, lives on, so the collector can tell whose Landlock's records are.
    cerb exec "$ID" sh -c 'echo "pid=$$"; read x </secret.txt; echo "read=$?"; /bin/tool; echo "tool=$?"; sleep 3' \
        >"$out" 2>&1 &
    EXEC_JOB=$!
    for _ in $(seq 100); do
        grep -q '^tool=' "$out" && break
        sleep 0.1
    done
    cat "$out"
    DENIED_PID="$(sed -n 's/^pid=//p' "$out")"
    grep -qx 'read=[1-9]' "$out"
    grep -qx 'tool=126' "$out"
    echo "pids: allowed $ALLOWED_PID, denied read $DENIED_PID"
}

# exactly_once: the denied read and exec are each one line of the trail within 2 s, and still one line each
# once the pairing of Landlock's records with the observer's calls has settled and the container is
# deleted (finish reads the audit log to its end); the allowed read is in no line (the control).
exactly_once() {
    local n
    for n in $(seq 20); do
        [ "$(jq -c 'select(.type == "denial")' "$TRAIL" 2>/dev/null | wc -l)" -ge 2 ] && break
        sleep 0.1
    done
    echo "after ${n}00 ms: $(cat "$TRAIL")"
    jq -se --argjson p "$DENIED_PID" 'map(select(.type == "denial" and .pid == $p and .op == "open"
        and .target == "/secret.txt" and .errno == 13 and .verdict == "denied")) | length == 1' "$TRAIL"
    jq -se 'map(select(.type == "denial" and .pid > 0 and .op == "exec" and .target == "/bin/tool"
        and .rule == "not in allowed_bins")) | length == 1' "$TRAIL"
    wait "$EXEC_JOB" # the shell's 3 s: a Landlock record no call paired would be written after a second
    cerb delete --force "$ID"
    echo "after delete: $(cat "$TRAIL")"
    jq -se 'map(select(.type == "denial" and .target == "/secret.txt")) | length == 1' "$TRAIL"
    jq -se 'map(select(.type == "denial" and .target == "/bin/tool")) | length == 1' "$TRAIL"
    jq -se 'map(select(.type == "denial")) | length == 2' "$TRAIL"
    jq -se --argjson p "$ALLOWED_PID" 'map(select(.pid == $p or .target == "/bin/allowed.txt")) | length == 0' "$TRAIL"
}

@test "kernel audit switched off between create and the denials: each denial is in the trail once; the allowed read is not" {
    [ "$AUDIT_BEFORE" != 2 ] || skip "kernel audit is locked on here"
    own_collector_or_none
    switched_run 1 0
    exactly_once
}

@test "kernel audit switched on between create and the denials: each denial is in the trail once, not twice; the allowed read is not" {
    [ "$AUDIT_BEFORE" != 2 ] || skip "kernel audit is locked on here"
    own_collector_or_none
    switched_run 0 1
    exactly_once
}

@test "audit mode in the host's pid namespace: the container starts (its domain holds no file rule), the read enforce would deny runs and is recorded, the allowed one is not" {
    own_collector_or_none
    echo 'for the agent' > "$BUNDLE/rootfs/bin/allowed.txt"
    edit_config '.root.readonly = false | .linux.namespaces |= map(select(.type != "pid"))'
    edit_config '.annotations["io.cerberus.policy"] = "{\"enforcement\": \"landlock\", \"mode\": \"audit\", \"allowed_paths\": [\"/tmp\"], \"read_only_paths\": [\"/bin\"]}"'
    set_args sh -c 'cat /secret.txt; echo "cat=$?"; cat /bin/allowed.txt; echo "allowed=$?"'
    run cerb --audit-dir "$AUDIT_DIR" run -b "$BUNDLE" "$ID"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *'cat=0'* ]]
    [[ "$output" == *'allowed=0'* ]]
    cat "$TRAIL"
    jq -se 'map(select(.type == "denial" and .verdict == "audit" and .target == "/secret.txt")) | length == 1' "$TRAIL"
    jq -se 'map(select(.type == "denial" and .target == "/bin/allowed.txt")) | length == 0' "$TRAIL"
}
