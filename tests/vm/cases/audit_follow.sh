#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Live view: two followers (`events --denials --follow`, json and text) of a running container each show a
# denial while they follow, and end by themselves once the container is deleted. The trail they follow
# opens with the start record naming the backend; the counts below are of denials. How soon a denial shows
# is measured (logged here); it is not asserted: under emulation on a loaded host it is not the code's.
# vm-timeout: 120
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-audit-follow
id=audit-follow-1
rm -f /var/log/cerberus/$id.jsonl
# The agent denies itself one connect each time /go appears.
make_bundle "$bundle" sh -c 'while :; do if [ -e /go ]; then rm /go; /bin/cerberus-probe connect tcp 203.0.113.9 443; fi; sleep 0.05; done' &&
    bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p | .root.readonly = false' \
        --arg p '{"allowed_hosts": ["192.0.2.1:443"]}' || exit 1
cerberus create --bundle "$bundle" "$id" >/dev/null 2>&1 </dev/null && cerberus start "$id" ||
    { vm_fail "container starts" "create or start failed"; exit 0; }

cerberus events --denials --follow --format json "$id" >/tmp/follow.json 2>&1 &
f1=$!
cerberus events --denials --follow "$id" >/tmp/follow.txt 2>&1 &
f2=$!
sleep 1
touch "$bundle/rootfs/go"
i=0
# Each follower shows the start record at once; the denial comes after.
until grep -q '"denial"' /tmp/follow.json && grep -q DENIED /tmp/follow.txt; do
    i=$((i + 1))
    [ $i -lt 100 ] || break
    sleep 0.05
done
seen="$(jq -n now)"
vm_log "json follower: $(cat /tmp/follow.json); text follower: $(cat /tmp/follow.txt)"
vm_expect_output "followers show the start record first" "start START" \
    sh -c 'echo $(head -n1 /tmp/follow.json | jq -r .type) $(head -n1 /tmp/follow.txt | cut -d" " -f3)'
latency="$(jq -r --argjson seen "$seen" 'select(.type == "denial") | .time | capture("^(?<s>[^.]*)(?<f>[.][0-9]+)Z$") |
    $seen - ((.s + "Z" | fromdateiso8601) + (.f | tonumber)) | . * 1000 | floor' /tmp/follow.json 2>/dev/null | head -n1)"
vm_log "denial to both followers: ${latency:-?} ms"
vm_expect_contains "json follower shows the denial" '"type":"denial"' cat /tmp/follow.json
vm_expect_contains "text follower shows the denial" "connect 203.0.113.9:443 DENIED (not in allowed_hosts)" cat /tmp/follow.txt

touch "$bundle/rootfs/go"
sleep 1
vm_expect_output "followers see the next one too" "2 2" sh -c 'echo $(grep -c "\"denial\"" /tmp/follow.json) $(grep -c DENIED /tmp/follow.txt)'
vm_expect_output "state reports no lost events" 0 sh -c "cerberus state $id | jq '.\"cerberus.eventsLost\"'"

cerberus delete --force "$id"
i=0
while kill -0 $f1 2>/dev/null || kill -0 $f2 2>/dev/null; do
    i=$((i + 1))
    [ $i -lt 40 ] || break
    sleep 0.05
done
if kill -0 $f1 2>/dev/null || kill -0 $f2 2>/dev/null; then
    vm_fail "followers end when the container is deleted" "still running after 2 s"
    kill $f1 $f2 2>/dev/null
else
    vm_ok "followers end when the container is deleted"
fi
vm_expect_output "trail stays after delete" "start 2" \
    sh -c "jq -s -r '\"\\(.[0].type) \\(map(select(.type == \"denial\")) | length)\"' /var/log/cerberus/$id.jsonl"
rm -rf "$bundle" /tmp/follow.json /tmp/follow.txt
exit 0
