#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Not lost: a burst of 100,000 denied connects from one agent. The events written plus the lost count the
# trail reports equal the denials made. A quiet container denied during another's burst loses nothing.
# vm-timeout: 600
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
n="${AUDIT_BURST:-100000}"
policy='{"allowed_hosts": ["192.0.2.1:443"]}'
noisy=/tmp/bundle-audit-noisy
quiet=/tmp/bundle-audit-quiet
rm -f /var/log/cerberus/audit-noisy*.jsonl /var/log/cerberus/audit-quiet.jsonl

# counts TRAIL: "<events written> <lost in all>"
# Read a line at a time: every event of a 500,000-denial burst is in the trail, and jq -s holding them all
# outgrows the VM's memory.
counts() {
    jq -r 'if .type == "denial" then "d" elif .type == "lost" then "l \(.count)" else empty end' "$1" |
        awk '$1 == "d" { d++ } $1 == "l" { l += $2 } END { print d + 0, l + 0 }'
}

make_bundle "$noisy" /bin/cerberus-probe burst "$n" &&
    bundle_edit "$noisy" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy" || exit 1
# create and start, so that the stopped container can still be asked for its state.
cerberus create --bundle "$noisy" audit-noisy-1 >/tmp/audit-noisy-1.out 2>&1 </dev/null || exit 1
start="$(jq -n now)"
cerberus start audit-noisy-1
until [ "$(cerberus state audit-noisy-1 | jq -r .status)" = stopped ]; do sleep 0.1; done
took="$(jq -n --argjson s "$start" 'now - $s | . * 10 | floor / 10')"
made="$(sed -n 's/^denied=\([0-9]*\) .*/\1/p' /tmp/audit-noisy-1.out)"
lost_state="$(cerberus state audit-noisy-1 | jq '."cerberus.eventsLost"')"
cerberus delete audit-noisy-1
set -- $(counts /var/log/cerberus/audit-noisy-1.jsonl)
vm_log "burst: $made denials made in ${took}s; $1 events written, $2 lost (state said $lost_state)"
vm_expect_output "the agent made $n denials" "$n" echo "$made"
vm_expect_output "written + lost = denials made" "$made" echo $(($1 + $2))
vm_expect_output "state reported the same lost count" "$2" echo "$lost_state"

# A quiet container is denied 10 times while a noisy one bursts (longer, so that it outlasts the quiet one).
make_bundle "$quiet" sh -c 'for i in 1 2 3 4 5 6 7 8 9 10; do /bin/cerberus-probe connect tcp 203.0.113.9 443; done' &&
    bundle_edit "$quiet" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy" || exit 1
bundle_set_args "$noisy" /bin/cerberus-probe burst $((n * 5)) || exit 1
cerberus create --bundle "$quiet" audit-quiet >/dev/null 2>&1 </dev/null || exit 1
cerberus create --bundle "$noisy" audit-noisy-2 >/tmp/audit-noisy-2.out 2>&1 </dev/null || exit 1
cerberus start audit-noisy-2
i=0
# Its first denial follows the start record.
until grep -q '"denial"' /var/log/cerberus/audit-noisy-2.jsonl 2>/dev/null || [ $i -ge 200 ]; do i=$((i + 1)); sleep 0.05; done
cerberus start audit-quiet
until [ "$(cerberus state audit-quiet | jq -r .status)" = stopped ]; do sleep 0.05; done
[ "$(cerberus state audit-noisy-2 | jq -r .status)" = running ] && during=yes || during=no
cerberus delete audit-quiet
until [ "$(cerberus state audit-noisy-2 | jq -r .status)" = stopped ]; do sleep 0.1; done
cerberus delete audit-noisy-2
vm_expect_output "noisy container was still bursting while the quiet one ran" yes echo $during
set -- $(counts /var/log/cerberus/audit-quiet.jsonl)
vm_log "quiet: $1 written, $2 lost (noisy still bursting when quiet ended: $during)"
vm_expect_output "quiet container keeps all its events" "10 0" echo "$1 $2"
set -- $(counts /var/log/cerberus/audit-noisy-2.jsonl)
made="$(sed -n 's/^denied=\([0-9]*\) .*/\1/p' /tmp/audit-noisy-2.out)"
vm_log "noisy beside quiet: $made made; $1 written, $2 lost"
vm_expect_output "noisy beside quiet: written + lost = denials made" "$made" echo $(($1 + $2))

rm -rf "$noisy" "$quiet" /tmp/audit-noisy-1.out /tmp/audit-noisy-2.out
exit 0
