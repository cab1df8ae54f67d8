#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Landlock's denials reach the trail through the kernel audit log with and without an audit daemon: the
# collector only joins the log's readlog multicast group, so it never takes the audit pid, and auditd
# (Debian's, put into the VM by fetch-auditd.sh) keeps its own log whole. In each run a landlock container
# reads a denied file and an allowed one: the trail holds exactly the denial, one line for the call observer's
# call and Landlock's own record of it (the record's blockers on the line, which only the record names);
# with auditd, auditd's log holds the same record and auditd is still the audit pid.
# vm-timeout: 300
# vm-boots: landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
if ! command -v auditd >/dev/null || ! command -v auditctl >/dev/null; then
    vm_skip "landlock denials with and without auditd" "no auditd in the VM (tests/vm/fetch-auditd.sh)"
    exit 0
fi
if ! cerberus check | grep -q 'Landlock ABI: *\([7-9]\|[1-9][0-9]\)'; then
    vm_skip "landlock denials with and without auditd" "Landlock logs denials from ABI 7 on"
    exit 0
fi
bundle=/tmp/bundle-audit-auditd
policy='{"enforcement": "landlock", "allowed_paths": ["/tmp"], "read_only_paths": ["/bin", "/etc"],
 "allowed_bins": ["/bin/busybox"]}'

audit_field() { auditctl -s | awk -v k="$1" '$1 == k { print $2 }'; }
vm_log "kernel audit at boot: $(auditctl -s | tr '\n' ' ')"
# Landlock logs only while kernel audit is on; Debian's 7.x leaves it to auditd or to this.
[ "$(audit_field enabled)" != 0 ] || auditctl -e 1 >/dev/null

# trail_run ID: the agent reads the denied file, then the allowed one; its trail's denials in /tmp/ID.denials.
trail_run() {
    make_bundle "$bundle" sh -c 'cat /secret.txt; echo "secret=$?"; cat /etc/allowed.txt; echo "allowed=$?"' &&
        bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy" || return 1
    echo 'not for the agent' >"$bundle/rootfs/secret.txt"
    echo 'for the agent' >"$bundle/rootfs/etc/allowed.txt"
    rm -f "/var/log/cerberus/$1.jsonl"
    # Asked for: in the boot with bpf in lsm= auto would take the BPF LSM, which needs no audit log.
    cerberus --enforcement landlock run --bundle "$bundle" "$1" >"/tmp/$1.out" 2>&1
    vm_log "$1 said: $(tr '\n' ' ' <"/tmp/$1.out")"
    jq -c 'select(.type == "denial")' "/var/log/cerberus/$1.jsonl" >"/tmp/$1.denials"
    vm_log "$1 denials: $(cat "/tmp/$1.denials")"
}

# check_trail ID WHAT: the denied read failed and is the trail's one denial, paired with Landlock's record; the
# allowed read worked and wrote nothing (the control).
check_trail() {
    vm_expect_output "$2: the denied read fails, the allowed one works" "$(printf 'secret=1\nfor the agent\nallowed=0')" \
        grep -v 'Permission denied' "/tmp/$1.out"
    vm_expect_output "$2: the trail holds exactly the denied read, once, with Landlock's record's blockers" true \
        jq -se --arg id "$1" 'length == 1 and (.[0] | .id == $id and .op == "open" and .target == "/secret.txt"
            and .blockers == "fs.read_file" and .comm == "cat" and .pid > 0 and .errno == 13)' "/tmp/$1.denials"
}

# (a) No audit daemon: the kernel sends its log to the multicast group alone.
trail_run audit-auditd-a
check_trail audit-auditd-a "no auditd"
vm_expect_output "no auditd: the collector took no audit pid" 0 audit_field pid

# (b) auditd running, with Debian's configuration (its log flushed at once, for this check; the VM has no
# adm group and a small tmpfs).
mkdir -p /var/log/audit /var/run
sed -i -e 's/^flush = .*/flush = SYNC/' -e 's/^log_group = .*/log_group = root/' \
    -e 's/^space_left = .*/space_left = 2/' -e 's/^admin_space_left = .*/admin_space_left = 1/' /etc/audit/auditd.conf
auditd -n >/tmp/auditd.out 2>&1 &
auditd_pid=$!
for _ in $(seq 50); do
    [ "$(audit_field pid)" = "$auditd_pid" ] && break
    sleep 0.1
done
vm_expect_output "auditd holds the audit pid" "$auditd_pid" audit_field pid
trail_run audit-auditd-b
check_trail audit-auditd-b "with auditd"
vm_expect_output "with auditd: auditd still holds the audit pid" "$auditd_pid" audit_field pid
denied="$(grep '^type=UNKNOWN\[1423\] .*blockers=fs.read_file path="/secret.txt"' /var/log/audit/audit.log)"
domain_records="$(echo "$denied" | grep -c .)"
# Every record of the denial's event (the unit tests' record text comes from here).
stamp="$(echo "$denied" | sed -n '1s/.*msg=\(audit([0-9.:]*)\).*/\1/p')"
vm_log "auditd's records of the denial's event: $(grep -F "$stamp" /var/log/audit/audit.log | tr '\n\035' '|~')"
# Run (a)'s record went to the multicast group alone (no auditd then): auditd's log has run (b)'s.
vm_expect_output "with auditd: auditd's log has the denial too" 1 echo "$domain_records"
vm_expect_output "with auditd: its log has no record of the allowed read" 0 \
    sh -c "grep -c 'UNKNOWN\[1423\].*allowed.txt' /var/log/audit/audit.log || true"
kill "$auditd_pid"
wait "$auditd_pid" 2>/dev/null
rm -rf "$bundle" /tmp/audit-auditd-*
exit 0
