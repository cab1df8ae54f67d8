#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The DNS gate against a real resolver, run by dns_gate.bats in a mount
# namespace of its own (unshare -m), where a fresh bpffs holds the maps and a
# tmpfs the run directories, so nothing of the host's pins, gates or
# collectors is touched. dnsmasq on 192.0.2.53 in the container's network
# namespace is the container's nameserver. Modes:
#   gate       the gate alone (`cerberus dns-gate`), asked by this script for a
#              container without a policy; dig asks 127.53.0.1 and [::1] on the
#              port the gate recorded for the container;
#   lifecycle  create, exec and delete of a container whose policy names hosts
#              (the landlock backend), asking the gate from inside;
#   pod        two such containers in one network namespace, different names:
#              each resolves and reaches its own only, through a gate restart
#              and the other's delete; nothing of either is left;
#   flood      the gate alone, serving a well-behaved container beside one that
#              floods it (dns_flood.sh): the first's answers keep coming;
#   ask        a policed container's lookups of names its ask_hosts lists, held
#              and answered with `cerberus ask` (dns_ask.sh);
#   learn      an audit-mode run that asks and reaches a name the policy does not
#              list, then `cerberus policy learn`: the name, not its address.
# Each check prints "ok ..." or "FAIL ..."; the exit status counts the failures.
set -uo pipefail
: "${CERBERUS:?}" "${ROOT:?}" "${BUNDLE:?}" "${ID:?}" "${WORK:?}"
mode=$1
. "$(dirname "$0")/script_checks.bash"

mount --make-rprivate /
mount -t bpf bpf /sys/fs/bpf
for dir in /run/cerberus-dns /run/cerberus-audit /run/cerberus-asks; do
    mkdir -p "$dir" && mount -t tmpfs tmpfs "$dir"
done
layout=$(grep -a -m1 -o '/sys/fs/bpf/cerberus/[0-9a-f]\{12\}' "$CERBERUS" | head -1)
run_dir=/run/cerberus-dns/${layout##*/}
mkdir -p "$layout" "$run_dir/containers"
# As the programs declare it (they reuse it when they pin theirs; the gate alone needs it made).
bpftool map create "$layout/cerb_names" type hash key 24 value 80 entries 65536 flags 1 name cerb_names
bpftool map create "$layout/cerb_dns_gates" type hash key 8 value 8 entries 16384 name cerb_dns_gates
cerb() { "$CERBERUS" --root "$ROOT" --audit-dir "$WORK/audit" --enforcement landlock "$@"; }
entry_for() { # entry_for HEX-BYTES-OF-ADDRESS: cerb_names has an entry for it
    bpftool map dump pinned "$layout/cerb_names" | tr -d '\n' | grep -q "$1"
}
map_empty() { [ "$(bpftool -j map dump pinned "$layout/cerb_names")" = '[]' ]; }
# gate_port_of CGROUP_ID: the port cerb_dns_gates records for the container's gate sockets; nothing when none.
gate_port_of() {
    bpftool -j map dump pinned "$layout/cerb_dns_gates" | python3 -c 'import json, sys
for entry in json.load(sys.stdin):
    key, value = (bytes(int(b, 16) for b in entry[part]) for part in ("key", "value"))
    if int.from_bytes(key, "little") == int(sys.argv[1]):
        print(int.from_bytes(value[:2], "little"))' "$1"
}
dnsmasq_pid= gate_pid= holder_pid= second= flood_resolver_pid=
cleanup() {
    [ -n "$gate_pid" ] && kill "$gate_pid" 2>/dev/null
    [ -n "$dnsmasq_pid" ] && kill "$dnsmasq_pid" 2>/dev/null
    [ -n "$flood_resolver_pid" ] && kill "$flood_resolver_pid" 2>/dev/null
    [ -n "$holder_pid" ] && kill "$holder_pid" 2>/dev/null
    wait 2>/dev/null
    cerb delete --force "$ID" >/dev/null 2>&1
    [ -z "$second" ] || cerb delete --force "$second" >/dev/null 2>&1
}
trap cleanup EXIT
# start_resolver PID: dnsmasq in that process's network namespace, on 192.0.2.53.
start_resolver() {
    nsenter --net="/proc/$1/ns/net" ip addr add 192.0.2.53/32 dev lo
    nsenter --net="/proc/$1/ns/net" dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
        --listen-address=192.0.2.53 --local-ttl=30 --user=root --pid-file="$WORK/dnsmasq.pid" \
        --address=/allowed.example/203.0.113.7 --address=/allowed.example/2001:db8::7 \
        --address=/private.example/10.1.2.3 --address=/a.wild.example/198.51.100.9 \
        --address=/wild.example/198.51.100.10 --address=/evil.example/203.0.113.66 \
        --address=/other.example/203.0.113.8 --address=/victim.example/203.0.113.9 &
    dnsmasq_pid=$!
    sleep 0.3
}

ask() { python3 -c 'import socket,sys
s=socket.socket(socket.AF_UNIX,socket.SOCK_SEQPACKET); s.connect(sys.argv[1]); s.send(sys.argv[2].encode()); print(s.recv(512).decode())' "$run_dir/gate.sock" "$1"; }
wait_for_gate() { for _ in $(seq 50); do [ -S "$run_dir/gate.sock" ] && break; sleep 0.1; done; }

state_has() { "$CERBERUS" --root "$ROOT" state "$ID" | jq -e "$1" >/dev/null; }
cgroup_of() { stat -c %i "$(findmnt -n -t cgroup2 -o TARGET | head -1)$(sed -n 's/^0:://p' "/proc/$1/cgroup")"; }

if [ "$mode" = learn ]; then
    echo "nameserver 192.0.2.53" > "$BUNDLE/rootfs/etc/resolv.conf"
    expect "create, in audit mode" cerb create -b "$BUNDLE" "$ID"
    pid=$(cerb state "$ID" | jq -r .pid)
    start_resolver "$pid"
    nsenter --net="/proc/$pid/ns/net" ip addr add 203.0.113.66/32 dev lo
    cerb start "$ID"
    expect "an unlisted name is answered in audit mode" \
        output_has 203.0.113.66 cerb exec "$ID" nslookup -type=a evil.example 127.53.0.1
    expect "and its address reached on 443 (audit lets it through)" \
        output_has ECONNREFUSED cerb exec "$ID" probe connect tcp 203.0.113.66 443
    trail="$WORK/audit/$ID.jsonl"
    for _ in $(seq 50); do grep -q '"target":"203.0.113.66:443"' "$trail" 2>/dev/null && break; sleep 0.1; done
    expect "the programs recorded the connect, by its address" grep -q '"op":"connect","target":"203.0.113.66:443"' "$trail"
    expect "the gate recorded the name with the address it answered" \
        grep -q '"name":"evil.example","qtype":"A","verdict":"audit","rule":"not in allowed_hosts","address":"203.0.113.66"' "$trail"
    learned=$(cerb policy learn --trail "$trail")
    echo "info learned: $(jq -c . <<<"$learned")"
    expect "learn proposes the name on the port reached" jq -e '.allowed_hosts | index("evil.example:443")' <<<"$learned"
    expect "control: and not the address it resolved to" jq -e '.allowed_hosts | index("203.0.113.66:443") | not' <<<"$learned"
    expect "the policy's own name is kept" jq -e '.allowed_hosts | index("allowed.example:443")' <<<"$learned"
    exit "$failures"
fi

if [ "$mode" = flood ]; then
    . "$(dirname "$0")/dns_flood.sh"
    exit "$failures"
fi

if [ "$mode" = ask ]; then
    . "$(dirname "$0")/dns_ask.sh"
    exit "$failures"
fi

if [ "$mode" = pod ]; then
    . "$(dirname "$0")/dns_pod.sh"
    exit "$failures"
fi

if [ "$mode" = lifecycle ]; then
    echo "nameserver 192.0.2.53" > "$BUNDLE/rootfs/etc/resolv.conf"
    expect "create registers a policy with names with the gate" cerb create -b "$BUNDLE" "$ID"
    pid=$(cerb state "$ID" | jq -r .pid)
    cgroup_id=$(cgroup_of "$pid")
    expect "its registration names the container's nameserver" \
        jq -e '.nameservers == ["192.0.2.53:53"] and .names[0].name == "allowed.example"' "$run_dir/containers/$cgroup_id.json" >/dev/null
    expect "state shows what the gate admitted (nothing yet)" state_has '.cerberus.dns == []'
    start_resolver "$pid"
    cerb start "$ID"
    expect "an allowed name is answered inside the container" \
        output_has 203.0.113.7 cerb exec "$ID" nslookup -type=a allowed.example 127.53.0.1
    expect "an unlisted name is REFUSED" output_has REFUSED cerb exec "$ID" nslookup -type=a evil.example 127.53.0.1
    # The programs steer every query to port 53 to the gate: the resolver's own address too.
    expect "an allowed name asked of the resolver's address is answered through the gate" \
        output_has 203.0.113.7 cerb exec "$ID" nslookup -type=a allowed.example 192.0.2.53
    expect "an unlisted name asked of the resolver's address is REFUSED by the gate" \
        output_has REFUSED cerb exec "$ID" nslookup -type=a evil.example 192.0.2.53
    expect "and so is one asked of any other address" \
        output_has REFUSED cerb exec "$ID" nslookup -type=a evil.example 198.51.100.53
    # The answer's address is open on the name's port only; an address never admitted stays shut.
    # Both are put on the namespace's lo so that an allowed connect meets ECONNREFUSED, not ENETUNREACH.
    nsenter --net="/proc/$pid/ns/net" ip addr add 203.0.113.7/32 dev lo
    nsenter --net="/proc/$pid/ns/net" ip addr add 203.0.113.66/32 dev lo
    expect "a connect to the admitted address on the name's port is let through" \
        output_has ECONNREFUSED cerb exec "$ID" probe connect tcp 203.0.113.7 443
    expect "on another port it is refused" output_has EPERM cerb exec "$ID" probe connect tcp 203.0.113.7 80
    expect "and an address no allowed answer carried is refused" \
        output_has EPERM cerb exec "$ID" probe connect tcp 203.0.113.66 443
    expect "state shows the admitted address with its name, ports and expiry" state_has '.cerberus.dns |
        map(select(.name == "allowed.example" and .address == "203.0.113.7" and .ports == "443" and (.expires | test("Z$"))))
        | length == 1'
    expect "the trail's text shows the refusal" \
        output_has 'dns evil.example A REFUSED (not in allowed_hosts)' cerb events --denials "$ID"
    expect "delete succeeds" cerb delete --force "$ID"
    expect "and leaves no registration" [ ! -e "$run_dir/containers/$cgroup_id.json" ]
    expect "nor cerb_names entries" map_empty
    exit "$failures"
fi

"$CERBERUS" --root "$ROOT" create -b "$BUNDLE" "$ID" || exit 1
pid=$("$CERBERUS" --root "$ROOT" state "$ID" | jq -r .pid)
cgroup_id=$(cgroup_of "$pid")
in_ns() { nsenter --net="/proc/$pid/ns/net" "$@"; }
start_resolver "$pid"

cat > "$WORK/registration.json" <<JSON
{"id":"$ID","cgroup_id":$cgroup_id,"trail":"$WORK/trail.jsonl","mode":"enforce",
 "names":[{"name":"allowed.example","ports":[[443,443]]},{"name":"private.example","ports":[[443,443]]},
          {"name":"*.wild.example","ports":[[80,80]]}],
 "networks":[],"nameservers":["192.0.2.53:53"]}
JSON
cp "$WORK/registration.json" "$run_dir/containers/$cgroup_id.json"
"$CERBERUS" dns-gate 2>"$WORK/gate.log" &
gate_pid=$!
wait_for_gate
expect "the gate serves the registered container" [ "$(ask "serve $cgroup_id")" = ok ]
port=$(gate_port_of "$cgroup_id")
expect "it records the port of the container's gate sockets ($port)" [ -n "$port" ]
expect "control: not the DNS port, which the programs steer from" [ "${port:-53}" != 53 ]
expect "its sockets are bound there, UDP and TCP, IPv4 and IPv6" bash -c "
    [ \$(nsenter --net=/proc/$pid/ns/net ss -Hlun | grep -c -e '127.53.0.1:$port ' -e '\[::1\]:$port ') = 2 ] &&
    [ \$(nsenter --net=/proc/$pid/ns/net ss -Hltn | grep -c -e '127.53.0.1:$port ' -e '\[::1\]:$port ') = 2 ]"

dig_gate() { in_ns dig -p "$port" +time=3 +tries=1 "$@"; }

# Control: the resolver itself answers every one of these names.
expect "control: the resolver answers evil.example" [ "$(in_ns dig +time=3 +tries=1 @192.0.2.53 +short evil.example A)" = 203.0.113.66 ]
expect "control: the resolver answers wild.example" [ "$(in_ns dig +time=3 +tries=1 @192.0.2.53 +short wild.example A)" = 198.51.100.10 ]

expect "an allowed name is answered through the gate (UDP, IPv4)" \
    [ "$(dig_gate @127.53.0.1 +short allowed.example A)" = 203.0.113.7 ]
expect "its address is admitted in cerb_names (cb 00 71 07 = 203.0.113.7)" entry_for "cb 00 71 07"
expect "an allowed name over TCP" [ "$(dig_gate @127.53.0.1 +tcp +short allowed.example AAAA)" = 2001:db8::7 ]
expect "an allowed name on [::1], the same port" [ "$(dig_gate @::1 +short allowed.example A)" = 203.0.113.7 ]
expect "its AAAA address is admitted (20 01 0d b8)" entry_for "20 01 0d b8"
expect "a wildcard matches one label below" [ "$(dig_gate @127.53.0.1 +short a.wild.example A)" = 198.51.100.9 ]
expect "an unlisted name is REFUSED" bash -c "nsenter --net=/proc/$pid/ns/net dig -p $port +time=3 +tries=1 @127.53.0.1 evil.example A | grep -q 'status: REFUSED'"
expect "over TCP too" bash -c "nsenter --net=/proc/$pid/ns/net dig -p $port +tcp +time=3 +tries=1 @127.53.0.1 evil.example TXT | grep -q 'status: REFUSED'"
expect "a wildcard never matches its parent" bash -c "nsenter --net=/proc/$pid/ns/net dig -p $port +time=3 +tries=1 @127.53.0.1 wild.example A | grep -q 'status: REFUSED'"
expect "an answer in a private range reaches the agent" [ "$(dig_gate @127.53.0.1 +short private.example A)" = 10.1.2.3 ]
expect "but is not admitted (0a 01 02 03)" bash -c "! bpftool map dump pinned $layout/cerb_names | tr -d '\n' | grep -q '0a 01 02 03'"
expect "the trail records the refusal" grep -q '"type":"dns".*"name":"evil.example","qtype":"A","verdict":"refused","rule":"not in allowed_hosts"' "$WORK/trail.jsonl"
expect "the trail records the address not admitted" grep -q '"name":"private.example".*"verdict":"not admitted","rule":"private range 10.0.0.0/8","address":"10.1.2.3"' "$WORK/trail.jsonl"
echo "info the gate's memory serving one container: $(grep VmRSS /proc/$gate_pid/status)"
expect "asked, the gate writes its snapshot now" [ "$(ask "snapshot $cgroup_id")" = ok ]
expect "the snapshot shows the admitted addresses" bash -c "jq -e '[.[] | select(.name == \"allowed.example\" and .ports == \"443\")] | length == 2' $run_dir/admitted/$cgroup_id.json >/dev/null"

# The answer cache (dig without its cookie, an EDNS option the cache does not serve): with the resolver
# stopped, a name asked before is answered, its TTL lowered; one never asked is not.
expect "an allowed name answered with the resolver up" [ "$(dig_gate +nocookie @127.53.0.1 +short allowed.example A)" = 203.0.113.7 ]
kill "$dnsmasq_pid" "$(cat "$WORK/dnsmasq.pid")" 2>/dev/null
wait "$dnsmasq_pid" 2>/dev/null
dnsmasq_pid=
for _ in $(seq 30); do ! in_ns ss -lun | grep -q 192.0.2.53:53 && break; sleep 0.1; done
expect "the resolver is stopped" bash -c "! nsenter --net=/proc/$pid/ns/net ss -lun | grep -q 192.0.2.53:53"
expect "with the resolver stopped, it is answered from the gate's cache" \
    [ "$(dig_gate +nocookie @127.53.0.1 +short allowed.example A)" = 203.0.113.7 ]
ttl=$(dig_gate +nocookie @127.53.0.1 +noall +answer allowed.example A | awk '{ print $2 }')
expect "with its TTL lowered from the resolver's 30 s ($ttl)" [ "${ttl:-30}" -lt 30 ]
expect "control: an allowed name never asked (the resolver answers every name under wild.example) is not answered" \
    bash -c "! nsenter --net=/proc/$pid/ns/net dig -p $port +nocookie +time=1 +tries=1 +short @127.53.0.1 b.wild.example A | grep -q 198.51.100.10"
start_resolver "$pid" 2>/dev/null

# A gate that dies: names stop resolving, admitted addresses stay; the next one rebuilds from the map.
{ kill -KILL "$gate_pid" && wait "$gate_pid"; } 2>/dev/null # bash's "Killed" notice
rm -f "$run_dir/gate.sock"
expect "with the gate gone, names stop resolving" bash -c "! nsenter --net=/proc/$pid/ns/net dig -p $port +time=1 +tries=1 +short @127.53.0.1 allowed.example A | grep -q 203.0.113.7"
expect "and what it admitted stays in the map" entry_for "cb 00 71 07"
"$CERBERUS" dns-gate 2>>"$WORK/gate.log" &
gate_pid=$!
wait_for_gate
expect "at start, its snapshot (rebuilt from the map) names the addresses" bash -c "jq -e '[.[] | select(.name == \"allowed.example\")] | length == 2' $run_dir/admitted/$cgroup_id.json >/dev/null"
expect "a new gate serves the registration again, on the port recorded" \
    [ "$(dig_gate @127.53.0.1 +short allowed.example A)" = 203.0.113.7 ]
expect "which it keeps" [ "$(gate_port_of "$cgroup_id")" = "$port" ]

expect "forget is answered" [ "$(ask "forget $cgroup_id")" = ok ]
expect "the cgroup's entries are gone" map_empty
expect "and its port" [ -z "$(gate_port_of "$cgroup_id")" ]
expect "and its sockets" bash -c "! nsenter --net=/proc/$pid/ns/net ss -Hlun | grep -q '127.53.0.1:$port '"
expect "and its registration" [ ! -e "$run_dir/containers/$cgroup_id.json" ]
# Audit mode: an unlisted name is forwarded, nothing opened for it, and the records say "audit" with the
# answer's addresses (learn mode's names come from them).
jq -c '.mode = "audit"' > "$WORK/audit.json" <<<"$(cat "$WORK/registration.json")"
mv "$WORK/audit.json" "$run_dir/containers/$cgroup_id.json"
expect "the gate serves the container again, in audit mode" [ "$(ask "serve $cgroup_id")" = ok ]
port=$(gate_port_of "$cgroup_id")
expect "an unlisted name is answered in audit mode" [ "$(dig_gate @127.53.0.1 +short evil.example A)" = 203.0.113.66 ]
expect "but its address is not admitted (cb 00 71 42): the programs record each connect instead" \
    bash -c "! bpftool map dump pinned $layout/cerb_names | tr -d '\n' | grep -q 'cb 00 71 42'"
expect "the record names the address answered" \
    grep -q '"name":"evil.example","qtype":"A","verdict":"audit","rule":"not in allowed_hosts","address":"203.0.113.66"' "$WORK/trail.jsonl"
expect "the record says audit" grep -q '"name":"evil.example","qtype":"A","verdict":"audit"' "$WORK/trail.jsonl"
expect "forget is answered again" [ "$(ask "forget $cgroup_id")" = ok ]
expect "a query finds no gate (fail closed)" bash -c "! nsenter --net=/proc/$pid/ns/net dig -p $port +time=1 +tries=1 +short @127.53.0.1 allowed.example A | grep -q 203.0.113.7"
for _ in $(seq 150); do kill -0 "$gate_pid" 2>/dev/null || break; sleep 0.1; done
expect "the gate exits once nothing is registered" bash -c "! kill -0 $gate_pid 2>/dev/null"
gate_pid=
[ "$failures" -eq 0 ] || cat "$WORK/gate.log"
exit "$failures"
