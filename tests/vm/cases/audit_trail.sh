#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Audit trail: an agent that tries a forbidden connect, open and exec leaves, after the start record naming
# the backend, its mode and its policy, exactly those three denials in /var/log/cerberus/<id>.jsonl, every
# field checked; the text form; the trail outlives the container's delete (root-owned, mode 0600); --audit-dir moves it.
# vm-timeout: 180
# vm-boots: bpf-lsm no-bpf-lsm
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-audit-trail
id=audit-trail-1
trail=/var/log/cerberus/$id.jsonl
policy='{"allowed_hosts": ["192.0.2.1:443"], "denied_paths": ["/etc/secret"],
         "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}'
p=/bin/cerberus-probe
# Each action in a process of its own that says its pid first (no pid namespace: the host's pid) and lives
# on a second after it, so the collector still finds its /proc/<pid>/exe.
script="sh -c 'echo p1=\$\$; exec $p hold 1 connect tcp 203.0.113.9 443';
sh -c 'echo p2=\$\$; exec $p hold 1 read /etc/secret';
sh -c 'echo p3=\$\$; exec $p hold 1 exec /bin/forbidden'"

make_bundle "$bundle" sh -c "$script" || exit 1
bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p | .process.user = {"uid": 1000, "gid": 1000}
    | .linux.namespaces |= map(select(.type != "pid"))' --arg p "$policy" || exit 1
echo secret >"$bundle/rootfs/etc/secret" && chmod 644 "$bundle/rootfs/etc/secret"
cp "$bundle/rootfs$p" "$bundle/rootfs/bin/forbidden"
rm -f "$trail"

before="$(date +%s)"
cerberus run --bundle "$bundle" "$id" >/tmp/audit-trail.out 2>&1
after="$(date +%s)"
vm_log "container said: $(tr '\n' ' ' </tmp/audit-trail.out)"
vm_expect_output "the actions are denied" "$(printf 'errno=1 (EPERM)\nerrno=13 (EACCES)\nerrno=13 (EACCES)')" \
    grep errno /tmp/audit-trail.out
cerberus delete "$id" 2>/dev/null # run deletes it already
vm_log "trail: $(cat "$trail")"

vm_expect_output "the start record names the backend" "start $POLICY_BACKEND" \
    sh -c "head -n1 $trail | jq -r '.type + \" \" + .enforcement'"
vm_expect_output "exactly three denials" 3 sh -c "jq -s 'map(select(.type == \"denial\")) | length' $trail"
vm_expect_output "the start record names the mode and the policy" true \
    jq -s --arg id "$id" --argjson policy "$policy" '.[0] | .id == $id and .mode == "enforce"
        and .policy.allowed_hosts == $policy.allowed_hosts and .policy.denied_paths == $policy.denied_paths' "$trail"
p1="$(sed -n 's/^p1=//p' /tmp/audit-trail.out)"
p2="$(sed -n 's/^p2=//p' /tmp/audit-trail.out)"
p3="$(sed -n 's/^p3=//p' /tmp/audit-trail.out)"

# check_event LINE CHECK JQ_EXPECTATIONS: every listed field of the LINE-th event as expected.
check_event() {
    vm_expect_output "$2" true jq -s --arg id "$id" --argjson before "$before" --argjson after "$after" \
        "map(select(.type == \"denial\")) | .[$1 - 1] | ($3) and .type == \"denial\" and .id == \$id and .uid == 1000 and .gid == 1000
         and .tid == .pid and .verdict == \"denied\" and .comm == \"cerberus-probe\"
         and .exe == \"/bin/cerberus-probe\"
         and (.time | test(\"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{9}Z\$\"))
         and (.time | sub(\"[.][0-9]+Z\$\"; \"Z\") | fromdateiso8601) as \$t | \$t >= \$before and \$t <= \$after" \
        "$trail"
}
check_event 1 "connect event has every field" ".pid == $p1 and .op == \"connect\" and .target == \"203.0.113.9:443\"
    and .errno == 1 and .error == \"EPERM\" and .rule == \"not in allowed_hosts\""
check_event 2 "open event has every field" ".pid == $p2 and .op == \"open\" and .target == \"/etc/secret\"
    and .errno == 13 and .error == \"EACCES\" and .rule == \"denied_paths /etc/secret\""
check_event 3 "exec event has every field" ".pid == $p3 and .op == \"exec\" and .target == \"/bin/forbidden\"
    and .errno == 13 and .error == \"EACCES\" and .rule == \"not in allowed_bins\""

vm_run cerberus events --denials "$id"
case "$(echo "$VM_STDOUT" | sed -n 2p)" in
[0-2][0-9]:[0-5][0-9]:[0-6][0-9].[0-9][0-9][0-9]" $id cerberus-probe[$p1] connect 203.0.113.9:443 DENIED (not in allowed_hosts)")
    vm_ok "text form, one line a denial" ;;
*) vm_fail "text form, one line a denial" "$(vm__said)" ;;
esac
vm_expect_output "json form is the trail" "$(cat "$trail")" cerberus events --denials --format json "$id"
vm_expect_output "trail survives delete, root-owned, mode 0600" "600 0 0" stat -c '%a %u %g' "$trail"
vm_expect_output "trail directory is closed to others" "700" stat -c '%a' /var/log/cerberus

# --audit-dir puts the trail elsewhere.
make_bundle "$bundle" $p connect tcp 203.0.113.9 443 &&
    bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"allowed_hosts": ["192.0.2.1:443"]}' || exit 1
cerberus --audit-dir /tmp/audit-elsewhere run --bundle "$bundle" audit-trail-2 >/dev/null 2>&1
vm_expect_output "--audit-dir moves the trail" connect \
    sh -c "cerberus --audit-dir /tmp/audit-elsewhere events --denials --format json audit-trail-2 | jq -r 'select(.type == \"denial\") | .op'"
vm_expect_errno "no trail for a container without one" ENOENT cerberus events --denials no-such-container

rm -rf "$bundle" /tmp/audit-trail.out /tmp/audit-elsewhere
exit 0
