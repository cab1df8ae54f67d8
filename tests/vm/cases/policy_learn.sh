#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Learn mode: an agent goes through a fixed set of actions under an audit-mode policy that allows little;
# `cerberus policy learn` widens that policy from the trail; the same agent under the learned policy in
# enforce mode is denied nothing, and with one new forbidden action it is denied exactly that one.
# `cerberus policy check` agrees: nothing recorded is denied by the learned policy, much by the first one.
# vm-timeout: 180
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-learn
# The agent reads its actions from /workspace/actions, one a line, and says what the kernel answered to
# each: network, files (three in /etc, which learn folds into the directory), a write and a directory
# outside the workspace, the exec of a tool.
actions='connect tcp 192.0.2.10 443
sendto udp 192.0.2.53 53
read /etc/passwd
read /etc/group
read /etc/hostname
write /workspace/notes
write /data/result
mkdir /data/cache
exec /bin/tool ids'
agent='while read -r action; do echo "$action -> $(/bin/cerberus-probe $action)"; done </workspace/actions'
audit_policy='{"mode": "audit", "allowed_hosts": [], "allowed_paths": ["/workspace"], "read_only_paths": ["/bin"],
 "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}'
# run ID POLICY [EXTRA_ACTION]: the agent under the policy; its output in /tmp/ID.out
run() {
    policy_bundle "$bundle" "$2" /bin/sh -c "$agent" || return 1
    mkdir -p "$bundle/rootfs/workspace" "$bundle/rootfs/data" "$bundle/rootfs/root"
    printf '%s\n' "$actions" ${3:+"$3"} >"$bundle/rootfs/workspace/actions"
    echo agent-host >"$bundle/rootfs/etc/hostname"
    echo secret >"$bundle/rootfs/root/secret"
    cp "$bundle/rootfs/bin/cerberus-probe" "$bundle/rootfs/bin/tool"
    rm -f "/var/log/cerberus/$1.jsonl"
    cerberus run --bundle "$bundle" "$1" >"/tmp/$1.out" 2>&1
    cerberus delete --force "$1" >/dev/null 2>&1
    vm_log "$1: $(tr '\n' ';' <"/tmp/$1.out")"
}
denials() { jq -c 'select(.type == "denial") | [.op, .target, .verdict]' "/var/log/cerberus/$1.jsonl"; }

run learn-audit "$audit_policy"
vm_log "audit trail: $(denials learn-audit | tr '\n' ' ')"
vm_expect_output "audit mode allowed every action" 0 sh -c 'grep -c -e EPERM -e EACCES /tmp/learn-audit.out; true'
vm_expect_contains "the trail has the audit verdicts" '["connect","192.0.2.10:443","audit"]' denials learn-audit

vm_run cerberus policy learn learn-audit
echo "$VM_STDOUT" >/tmp/learned.json
vm_log "learned: $(jq -c . /tmp/learned.json)"
vm_expect_output "learn: hosts with their ports" '["192.0.2.10:443","192.0.2.53:53"]' jq -c .allowed_hosts /tmp/learned.json
vm_expect_output "learn: three files in /etc folded into /etc" '["/bin","/etc"]' jq -c .read_only_paths /tmp/learned.json
# Landlock grants making a name only on the directory it is made in: there the new file and directory are /data.
writes='["/workspace","/data/cache","/data/result"]'
[ "$POLICY_BACKEND" = landlock ] && writes='["/workspace","/data"]'
vm_expect_output "learn: the write and the new directory outside the workspace" "$writes" jq -c .allowed_paths /tmp/learned.json
vm_expect_output "learn: the tool exactly" '["/bin/busybox","/bin/cerberus-probe","/bin/tool"]' jq -c .allowed_bins /tmp/learned.json
vm_expect_output "learn: enforce mode, and says from what" "enforce learn-audit /var/log/cerberus/learn-audit.jsonl" \
    jq -r '"\(.mode) \(._learned.container) \(._learned.learned_from)"' /tmp/learned.json
vm_expect_output "policy check: the learned policy denies nothing recorded" \
    "0 kinds of recorded action would be denied by /tmp/learned.json" \
    cerberus policy check /tmp/learned.json --trail /var/log/cerberus/learn-audit.jsonl
echo "$audit_policy" | jq '.mode = "enforce"' >/tmp/audit-policy.json
vm_run cerberus policy check /tmp/audit-policy.json learn-audit
case "$VM_STATUS:$VM_STDOUT" in
1:*"connect 192.0.2.10:443 DENIED (not in allowed_hosts)"*"exec /bin/tool DENIED (not in allowed_bins)"*) vm_ok "policy check: the first policy denies them" ;;
*) vm_fail "policy check: the first policy denies them" "$(vm__said)" ;;
esac

run learn-enforce "$(cat /tmp/learned.json)"
vm_expect_output "the learned policy, enforced: no denial in the trail" "" denials learn-enforce
vm_expect_output "and none seen by the agent" 0 sh -c 'grep -c -e EPERM -e EACCES /tmp/learn-enforce.out; true'
vm_expect_contains "the agent did its work" "write /data/result -> ok" cat /tmp/learn-enforce.out

run learn-new "$(cat /tmp/learned.json)" "read /root/secret"
vm_expect_output "one new forbidden action: exactly that one is denied" '["open","/root/secret","denied"]' denials learn-new
vm_expect_contains "and the agent sees EACCES for it" "read /root/secret -> errno=13 (EACCES)" cat /tmp/learn-new.out
rm -rf "$bundle" /tmp/learn-*.out /tmp/learned.json /tmp/audit-policy.json
exit 0
