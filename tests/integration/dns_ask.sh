# SPDX-License-Identifier: Apache-2.0
# dns_gate.sh's ask mode, sourced by it (its helpers, $ID's bundle with
# allowed.example:443 allowed and other.example:443, *.wild.example:80 asked
# about, ask_timeout 3s): a lookup of an asked name is held while busybox's
# nslookup waits, then answered as root answers it with `cerberus ask`.
echo "nameserver 192.0.2.53" > "$BUNDLE/rootfs/etc/resolv.conf"
expect "create a container whose policy asks about names" cerb create -b "$BUNDLE" "$ID"
pid=$(cerb state "$ID" | jq -r .pid)
cgroup_id=$(cgroup_of "$pid")
expect "its registration holds the asked names and the timeout" \
    jq -e '.ask_names[0].name == "other.example" and .ask_timeout_ms == 3000' "$run_dir/containers/$cgroup_id.json"
start_resolver "$pid"
nsenter --net="/proc/$pid/ns/net" ip addr add 203.0.113.8/32 dev lo
cerb start "$ID"
trail="$WORK/audit/$ID.jsonl"
grants="/run/cerberus-asks/${layout##*/}/grants.json"

# lookup NAME OUT: nslookup in the container, in the background; its output in OUT.
lookup() { cerb exec "$ID" nslookup -type=a "$1" 127.53.0.1 >"$2" 2>&1 & }
. "$(dirname "$0")/ask_helpers.bash"
# settled OUT PATTERN: the lookup writing OUT ended (5 s), with PATTERN in its output.
settled() {
    for _ in $(seq 50); do grep -q -e "$2" -e "server can't find" -e "timed out" "$1" && break; sleep 0.1; done
    grep -q -- "$2" "$1" && return
    echo "said: $(cat "$1")"
    return 1
}
no_ask() { [ "$(pending_asks)" = 0 ]; }

expect "control: an allowed name is answered unasked" \
    output_has 203.0.113.7 cerb exec "$ID" nslookup -type=a allowed.example 127.53.0.1
expect "control: and nothing is asked" no_ask

# Allowed once from the CLI while the lookup waits.
lookup other.example "$WORK/once.out"
id=$(wait_ask)
expect "a lookup of an asked name is held as a pending ask ($id)" [ -n "$id" ]
expect "ask list shows it with the container and the name" \
    output_has "$id .*$ID .*host other.example" "$CERBERUS" ask list
sleep 0.5
expect "the lookup waits (no answer yet)" bash -c "! grep -q 203.0.113.8 $WORK/once.out"
expect "allowed once from the CLI" output_has "^ask $id allowed once by uid 0$" "$CERBERUS" ask allow "$id"
expect "the held lookup resolves" settled "$WORK/once.out" 203.0.113.8
expect "the answer's address is admitted on the asked entry's port" \
    output_has ECONNREFUSED cerb exec "$ID" probe connect tcp 203.0.113.8 443
expect "control: not on another port" output_has EPERM cerb exec "$ID" probe connect tcp 203.0.113.8 80
expect "a second answer is told the first" \
    output_has "ask $id was answered already: allowed once by uid 0" "$CERBERUS" ask deny "$id"
expect "the trail records the ask and the lookup allowed" bash -c "
    grep -q '\"type\":\"ask\".*\"name\":\"other.example\",\"qtype\":\"A\",\"ask\":\"$id\"' $trail &&
    grep -q '\"name\":\"other.example\",\"qtype\":\"A\",\"verdict\":\"allowed\",.*allowed once by uid 0.*\"answer\":\"once\",\"answered_by\":0' $trail"

# Denied from the CLI: REFUSED, as an unlisted name.
lookup a.wild.example "$WORK/deny.out"
denied=$(wait_ask "$id")
expect "once is once: the name asked again is held again; a wildcard entry asks too ($denied)" [ -n "$denied" ]
expect "denied from the CLI" output_has "^ask $denied denied by uid 0$" "$CERBERUS" ask deny "$denied"
expect "the held lookup is REFUSED" settled "$WORK/deny.out" REFUSED
expect "the trail records the refusal with who denied it" \
    grep -q "\"name\":\"a.wild.example\",\"qtype\":\"A\",\"verdict\":\"refused\",.*denied by uid 0" "$trail"

# Unanswered: refused at the ask's timeout.
lookup b.wild.example "$WORK/timeout.out"
late=$(wait_ask "$denied")
expect "an unanswered ask ($late) is REFUSED at its timeout" settled "$WORK/timeout.out" REFUSED
expect "the trail says it timed out" grep -q "\"name\":\"b.wild.example\".*\"verdict\":\"refused\",.*ask $late timed out after 3s unanswered.*\"answer\":\"timeout\"" "$trail"
expect "and its ask is no longer pending" no_ask

# A grant for 2 s: later lookups resolve unasked until it expires, then the name is asked (and refused) again.
lookup other.example "$WORK/for.out"
lasting=$(wait_ask "$late")
expect "allowed for 2s, which grants the name" output_has "^ask $lasting allowed for 2s by uid 0, grant g-" \
    "$CERBERUS" ask allow "$lasting" --for 2s
expect "the held lookup resolves" settled "$WORK/for.out" 203.0.113.8
expect "state shows the grant with its expiry" state_has \
    '.cerberus.grants | map(select(.host == "other.example" and (.expires | test("Z$")))) | length == 1'
expect "ask grants lists it" output_has "$ID .*host other.example" "$CERBERUS" ask grants "$ID"
expect "within the grant, the name resolves unasked" \
    output_has 203.0.113.8 cerb exec "$ID" nslookup -type=a other.example 127.53.0.1
expect "and nothing is asked" no_ask
for _ in $(seq 40); do [ "$(jq length "$grants")" = 0 ] && break; sleep 0.1; done
expect "the grant is removed once it expired" [ "$(jq length "$grants")" = 0 ]
lookup other.example "$WORK/expired.out"
again=$(wait_ask "$lasting")
expect "after the grant expired the name is asked again ($again)" [ -n "$again" ]
expect "denied" output_has "denied by uid 0" "$CERBERUS" ask deny "$again"
expect "and the lookup is REFUSED again" settled "$WORK/expired.out" REFUSED

# Always, revoked; and a grant goes with its container.
lookup other.example "$WORK/always.out"
always=$(wait_ask "$again")
grant=$("$CERBERUS" ask allow "$always" --always | grep -o 'g-[0-9a-f]*')
expect "allowed always ($grant)" [ -n "$grant" ]
expect "the held lookup resolves" settled "$WORK/always.out" 203.0.113.8
expect "state shows the grant as never expiring" state_has '.cerberus.grants | map(select(.expires == "never")) | length == 1'
expect "revoked from the CLI" output_has "grant $grant revoked" "$CERBERUS" ask revoke "$grant"
lookup other.example "$WORK/revoked.out"
revoked=$(wait_ask "$always")
expect "after the revocation the name is asked again ($revoked)" [ -n "$revoked" ]
grant=$("$CERBERUS" ask allow "$revoked" --always | grep -o 'g-[0-9a-f]*')
settled "$WORK/revoked.out" 203.0.113.8 >/dev/null
expect "the trail text shows the ask" output_has "ask $id dns other.example A ASKED (ask_hosts \"other.example\")" \
    cerb events --denials "$ID"
expect "delete succeeds" cerb delete --force "$ID"
expect "and takes the container's grants with it" [ "$(jq length "$grants")" = 0 ]
