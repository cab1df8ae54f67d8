#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The trail of a path-rule policy, on every backend: in a running container, a denied read, a denied write
# and a denied exec (each in a process of its own, started by `cerberus exec`) are each in
# `cerberus events --denials` within 2 s, with the container, the process (comm, exe, pid), the op, the
# path, the rule and the verdict; the allowed read, write and exec beside them are in no record. The same
# policy in audit mode lets all six through, and its trail lists what enforce mode denied (op, path, rule),
# with the verdict "audit" (on landlock nothing more; the BPF backends also record a later hook the
# action reaches once let through, the created file's open). Where the backend cannot report a kind on
# this kernel, the START record says so and why (a skip naming the reason).
# vm-timeout: 300
# rule-kinds: paths allowed_bins
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-trail
p=/bin/cerberus-probe
policy='{"allowed_paths": ["/tmp"], "read_only_paths": ["/bin", "/etc"],
         "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}'

# A container that sleeps, as uid 1000, under the policy in MODE.
start_container() {
    make_bundle "$bundle" sleep 600 &&
        bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = ($p | fromjson | .mode = $m | tojson)
            | .root.readonly = false | .process.user = {"uid": 1000, "gid": 1000}' \
            --arg p "$policy" --arg m "$2" || return 1
    echo 'not for the agent' >"$bundle/rootfs/secret.txt"
    echo 'for the agent' >"$bundle/rootfs/etc/allowed.txt"
    chmod 644 "$bundle/rootfs/secret.txt" "$bundle/rootfs/etc/allowed.txt"
    chmod 777 "$bundle/rootfs/etc" # the file system lets uid 1000 write there: a refusal is the policy's
    chmod 1777 "$bundle/rootfs/tmp"
    cp "$bundle/rootfs$p" "$bundle/rootfs/bin/forbidden"
    rm -f "/var/log/cerberus/$1.jsonl"
    cerberus delete --force "$1" >/dev/null 2>&1
    cerberus run -d --bundle "$bundle" "$1" >/tmp/policy-trail.run 2>&1 ||
        { vm_fail "$2, the container starts" "$(cat /tmp/policy-trail.run)"; return 1; }
}

# act ID NAME ARG...: runs the probe with ARG... in the container as a process of its own (cerberus exec),
# which lives 2 s after its action; returns once the action is done, with PID_<NAME> set to the process's
# pid as the host sees it (the trail's; from `cerberus ps` while it lives: the container has a pid namespace
# of its own). said NAME prints what the probe printed.
act() {
    local id="$1" name="$2" out="/tmp/policy-trail.$2" before host="" n=0
    shift 2
    rm -f "$out"
    before="$(cerberus ps --format json "$id")" # the init, and processes of earlier actions still living
    cerberus exec --user 1000:1000 "$id" sh -c 'echo "started"; exec "$@"' sh $p hold 2 "$@" >"$out" 2>&1 &
    while [ $n -lt 100 ]; do
        [ -n "$host" ] || ! grep -q '^started' "$out" 2>/dev/null ||
            host="$(cerberus ps --format json "$id" | jq --argjson before "$before" '. - $before | .[0] // empty')"
        [ -n "$host" ] && [ "$(grep -vc '^started' "$out")" -gt 0 ] && break
        sleep 0.1
        n=$((n + 1))
    done
    eval "PID_$name=\"$host\""
}

said() {
    grep -v '^started' "/tmp/policy-trail.$1" | tr '\n' ' ' | sed 's/ $//'
}

# records_of ID PID: the trail's denial records of that process, one JSON object a line.
records_of() {
    cerberus events --denials --format json "$1" 2>/dev/null | jq -c --argjson pid "$2" 'select(.type == "denial" and .pid == $pid)'
}

# within_2s ID PID: waits up to 2 s for a record of the process; prints the tenths of a second it took.
within_2s() {
    local n=0
    while [ $n -le 20 ]; do
        [ -n "$(records_of "$1" "$2")" ] && { echo "$n"; return 0; }
        sleep 0.1
        n=$((n + 1))
    done
    return 1
}

# not_reported_why KIND: the START record's reason when the backend cannot report KIND here; empty when it can.
not_reported_why() {
    cerberus events --denials --format json "$1" 2>/dev/null | jq -r --arg k "$2" \
        'select(.type == "start") | if (.not_reported | index($k)) then (.why_not_reported[$k] // "no reason given") else empty end'
}

# check_denial ID MODE NAME KIND OP TARGET RULE_PREFIX: the process NAME's action is in the trail within 2 s,
# one record, with every field (its exe the probe's, or in audit mode, where the BPF backends' collector
# reads it once the exec went through, the program it ran); or, where the START record says KIND is not
# reported, a skip with its reason.
check_denial() {
    local id="$1" mode="$2" name="$3" kind="$4" op="$5" target="$6" rule="$7" pid why took verdict
    eval "pid=\$PID_$name"
    verdict=audit
    case "$mode" in enforce*) verdict=denied ;; esac
    why="$(not_reported_why "$id" "$kind")"
    if [ -n "$why" ]; then
        vm_skip "$mode, the $name is in the trail" "cannot hold on $POLICY_BACKEND: $why"
        return
    fi
    if [ -z "$pid" ]; then
        vm_fail "$mode, the $name is in the trail within 2 s" "the process said no pid"
        return
    fi
    if took="$(within_2s "$id" "$pid")"; then
        vm_log "$mode $name: in the trail after ${took}00 ms: $(records_of "$id" "$pid")"
        vm_ok "$mode, the $name is in the trail within 2 s"
    else
        vm_fail "$mode, the $name is in the trail within 2 s" "no record of pid $pid; the records: $(cerberus events --denials --format json "$id" 2>&1 | jq -c "select(.type == \"denial\") | [.pid, .comm, .op, .target]")"
        return
    fi
    vm_expect_output "$mode, the $name's record has the container, process, pid, op, path, rule and verdict" true \
        sh -c "records_of() { cerberus events --denials --format json '$id' | jq -c 'select(.type == \"denial\" and .pid == $pid
                   and .op == \"$op\" and .target == \"$target\")'; }
               records_of | jq -se --arg id '$id' --arg op '$op' --arg target '$target' --arg rule '$rule' --arg v '$verdict' \
               'length == 1 and (.[0] | .id == \$id and .pid == $pid and .tid > 0 and .uid == 1000 and .comm == \"cerberus-probe\"
                and (.exe == \"/bin/cerberus-probe\" or (\$v == \"audit\" and \$op == \"exec\" and .exe == \$target))
                and .op == \$op and .target == \$target and .verdict == \$v
                and (.rule | startswith(\$rule)) and (.time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T\")))'"
    # Where Landlock logs its refusals (the read and the exec; the write is the read-only mount's EROFS),
    # its record paired with the observer's call: one line, carrying the record's blockers.
    if [ "$LANDLOCK_RECORDS" = 1 ] && [ "$name" != write ]; then
        vm_expect_output "$mode, the $name's line carries Landlock's record's blockers" true \
            sh -c "cerberus events --denials --format json '$id' | jq -se 'map(select(.type == \"denial\" and .pid == $pid))
                   | length == 1 and (.[0].blockers | startswith(\"fs.\"))'"
    fi
}

# check_control ID MODE NAME TARGET: the allowed action is in no record, by its process or its path.
check_control() {
    local pid
    eval "pid=\$PID_$3"
    if [ -z "$pid" ]; then
        vm_fail "$2, the allowed $3 is in no record" "its process was not found"
        return
    fi
    vm_expect_output "$2, the allowed $3 is in no record" 0 \
        sh -c "cerberus events --denials --format json '$1' | jq -s '[.[] | select(.type == \"denial\" and (.pid == $pid or .target == \"$4\"))] | length'"
}

# run_actions ID MODE: the three allowed actions and the three the policy denies, one after the other, each
# denial looked for in the trail at once.
run_actions() {
    act "$1" allowed_read read /etc/allowed.txt
    act "$1" read read /secret.txt
    check_denial "$1" "$2" read "allowed_paths, read_only_paths" open /secret.txt "not in allowed_paths"
    act "$1" allowed_write write /tmp/new.txt
    act "$1" write write /etc/new.txt
    check_denial "$1" "$2" write "allowed_paths, read_only_paths" create /etc/new.txt "read_only_paths /etc"
    act "$1" allowed_exec exec /bin/cerberus-probe hold 2 read /etc/allowed.txt
    act "$1" exec exec /bin/forbidden hold 2 read /etc/allowed.txt
    check_denial "$1" "$2" exec allowed_bins exec /bin/forbidden "not in allowed_bins"
    wait
    SAID="$(said allowed_read) $(said allowed_write) $(said allowed_exec) | $(said read) $(said write) $(said exec)"
    vm_log "$2: the actions said: $SAID"
    check_control "$1" "$2" allowed_read /etc/allowed.txt
    check_control "$1" "$2" allowed_write /tmp/new.txt
    check_control "$1" "$2" allowed_exec /bin/cerberus-probe
}

# --- enforce mode -------------------------------------------------------------------------------------
# Where Landlock logs its denials (ABI 7) and the VM can switch kernel audit (cerberus-audit-switch), once
# with audit on (Landlock's records, paired with the observer's calls) and once with it off (the observer
# alone); elsewhere once, as the kernel is.
audit_states=as-is
if [ "$POLICY_BACKEND" = landlock ] && command -v cerberus-audit-switch >/dev/null &&
    cerberus check 2>/dev/null | grep -q 'Landlock ABI: *\([7-9]\|[1-9][0-9]\)'; then
    audit_was="$(cerberus-audit-switch get)"
    audit_states="1 0"
fi
for state in $audit_states; do
    mode=enforce LANDLOCK_RECORDS=0
    case "$state" in
    1) cerberus-audit-switch set 1 && mode="enforce, kernel audit on" LANDLOCK_RECORDS=1 ;;
    0) cerberus-audit-switch set 0 && mode="enforce, kernel audit off" ;;
    esac
    id="policy-trail-enforce-$state"
    start_container "$id" enforce || continue
    run_actions "$id" "$mode"
    vm_expect_output "$mode, the allowed actions work, the denied ones fail" \
        "ok ok ok | errno=13 (EACCES) errno=$(denial_errno "13 (EACCES)" "30 (EROFS)") errno=13 (EACCES)" echo "$SAID"
    vm_expect_output "$mode, the text form names the denied read" 1 \
        sh -c "cerberus events --denials '$id' | grep -c ' cerberus-probe\[$PID_read\] open /secret.txt DENIED '"
    cerberus events --denials --format json "$id" | jq -c 'select(.type == "denial") | [.op, .target, .rule]' |
        sort >/tmp/policy-trail.enforce
    cerberus delete --force "$id" >/dev/null 2>&1
done
LANDLOCK_RECORDS=0
[ -z "$audit_was" ] || cerberus-audit-switch set "$audit_was"

# --- audit mode: everything runs, the trail lists what enforce denied ---------------------------------
id=policy-trail-audit
if start_container "$id" audit; then
    run_actions "$id" audit
    audit_runs "audit, every action works" "ok ok ok | ok ok ok" echo "$SAID"
    cerberus delete --force "$id" >/dev/null 2>&1
    # What enforce mode denied, each; on the BPF backends an action audit mode lets through can reach a later
    # hook too (the created file's open), on landlock nothing more.
    cerberus events --denials --format json "$id" | jq -c 'select(.type == "denial") | [.op, .target, .rule]' |
        sort >/tmp/policy-trail.audit
    vm_log "audit: $(tr '\n' ' ' </tmp/policy-trail.audit); enforce: $(tr '\n' ' ' </tmp/policy-trail.enforce)"
    if [ "$POLICY_BACKEND" = landlock ]; then
        vm_expect_output "audit, the trail lists what enforce mode denied, nothing more" "$(cat /tmp/policy-trail.enforce 2>/dev/null)" \
            cat /tmp/policy-trail.audit
    else
        vm_expect_output "audit, the trail lists what enforce mode denied" "" \
            sh -c "[ -s /tmp/policy-trail.enforce ] && { grep -vxF -f /tmp/policy-trail.audit /tmp/policy-trail.enforce; true; }"
    fi
fi

rm -rf "$bundle" /tmp/policy-trail.*
exit 0
