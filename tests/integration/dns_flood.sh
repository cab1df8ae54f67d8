# SPDX-License-Identifier: Apache-2.0
# dns_gate.sh's flood mode, sourced by it (its helpers, $ID's bundle): the gate
# alone serves two containers, each in a network namespace of its own with its
# own dnsmasq on 192.0.2.53. One floods its gate port (tests/helpers/dns_flood.py:
# UDP as fast as it can send, thousands of idle TCP connections, readers that
# never read, malformed queries); the other's lookups of names never asked
# before must keep coming within the bound docs/policy.md states ("The gate
# under a hostile neighbour"), measured without the flood first as the control.
helper="$(dirname "$0")/../helpers/dns_flood.py"
lookups=300
bound_p99_ms=100 bound_max_ms=500

second="$ID-flood"
mkdir -p "$WORK/bundle-flood"
jq --arg root "$BUNDLE/rootfs" --arg cgroup "/cerberus-test/$second" \
    '.root.path = $root | .linux.cgroupsPath = $cgroup' "$BUNDLE/config.json" > "$WORK/bundle-flood/config.json"
cerb create -b "$BUNDLE" "$ID" || exit 1
cerb create -b "$WORK/bundle-flood" "$second" || exit 1
pid=$(cerb state "$ID" | jq -r .pid)
flood_pid=$(cerb state "$second" | jq -r .pid)
expect "control: the two containers are in network namespaces of their own" \
    [ "$(readlink "/proc/$pid/ns/net")" != "$(readlink "/proc/$flood_pid/ns/net")" ]
start_resolver "$pid" # it answers every name under victim.example
nsenter --net="/proc/$flood_pid/ns/net" ip addr add 192.0.2.53/32 dev lo
nsenter --net="/proc/$flood_pid/ns/net" dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
    --listen-address=192.0.2.53 --local-ttl=30 --user=root --pid-file="$WORK/dnsmasq-flood.pid" \
    --address=/flood.example/203.0.113.70 &
flood_resolver_pid=$!
sleep 0.3

# register CGROUP-ID ID NAME NAMESERVER
register() {
    jq -n --arg id "$2" --argjson cgroup "$1" --arg trail "$WORK/$2.jsonl" --arg name "$3" --arg ns "$4" \
        '{id: $id, cgroup_id: $cgroup, trail: $trail, mode: "enforce", names: [{name: $name, ports: [[443, 443]]}],
          networks: [], nameservers: [$ns]}' > "$run_dir/containers/$1.json"
}
victim_cgroup=$(cgroup_of "$pid")
flood_cgroup=$(cgroup_of "$flood_pid")
register "$victim_cgroup" "$ID" "*.victim.example" 192.0.2.53:53
register "$flood_cgroup" "$second" "*.flood.example" 192.0.2.53:53
"$CERBERUS" dns-gate 2>"$WORK/gate.log" &
gate_pid=$!
wait_for_gate
expect "the gate serves the well-behaved container" [ "$(ask "serve $victim_cgroup")" = ok ]
expect "and the flooding one" [ "$(ask "serve $flood_cgroup")" = ok ]
victim_port=$(gate_port_of "$victim_cgroup")
flood_port=$(gate_port_of "$flood_cgroup")
in_victim() { nsenter --net="/proc/$pid/ns/net" "$@"; }
in_flooder() { nsenter --net="/proc/$flood_pid/ns/net" "$@"; }

# within_bound JSON: every lookup answered, the 99th percentile and the maximum within the bound.
within_bound() {
    jq -e --argjson n "$lookups" --argjson p99 "$bound_p99_ms" --argjson max "$bound_max_ms" \
        '.answered == $n and .p99_ms <= $p99 and .max_ms <= $max' <<<"$1" >/dev/null
}
quiet=$(in_victim python3 "$helper" probe "$victim_port" "$lookups")
echo "info without the flood: $quiet"
expect "control: without the flood, $lookups lookups answered within p99 $bound_p99_ms ms, max $bound_max_ms ms" \
    within_bound "$quiet"

flood_seconds=12
in_flooder python3 "$helper" flood "$flood_port" "$flood_seconds" > "$WORK/flood.json" &
flooder=$!
sleep 3 # its connections open and its UDP under way
loud=$(in_victim python3 "$helper" probe "$victim_port" "$lookups")
echo "info beside the flood: $loud"
# The flooder's connections the gate holds (accepted: the kernel completes more, which it has not taken yet).
held=$(in_flooder ss -Htnp state established "( sport = :$flood_port )" | grep -c "pid=$gate_pid,")
wait "$flooder"
flood=$(cat "$WORK/flood.json")
echo "info the flood: $flood"
echo "info the gate's memory after the flood: $(grep VmRSS "/proc/$gate_pid/status")"
expect "beside the flood, $lookups lookups answered within p99 $bound_p99_ms ms, max $bound_max_ms ms" \
    within_bound "$loud"
flood_has() { jq -e "$1" <<<"$flood" >/dev/null; }
expect "the flood was a flood: over twice the query rate" flood_has '.udp_rate >= 10000'
expect "over its rate it was answered REFUSED, its malformed queries FORMERR" \
    flood_has '.replies["5"] > 0 and .replies["1"] > 0'
expect "of its thousands of connections the gate held some, at most 32 ($held)" \
    bash -c "[ $held -ge 1 ] && [ $held -le 32 ] && jq -e '.idle_opened >= 2000' <<<'$flood' >/dev/null"
trail="$WORK/$second.jsonl"
expect "its trail records the refusals over the rate" grep -q '"verdict":"refused","rule":"over the query rate of 5000 a second"' "$trail"
expect "and the connections over the limit" grep -q '"rule":"TCP connections at the limit of 32"' "$trail"
expect "and counts the queries dropped past the refusals' rate" grep -q '"verdict":"dropped","rule":"[0-9]* queries over' "$trail"
expect "and the records not written" grep -q '"verdict":"not recorded","rule":"[0-9]* records over the trail' "$trail"
records=$(wc -l < "$trail")
expect "which stays short ($records lines: 200 and 20 per limit at once, then 50 and 5 per limit a second, two counts)" \
    [ "$records" -le $((200 + 4 * 20 + (50 + 4 * 5 + 2) * (flood_seconds + 5))) ]
expect "control: the well-behaved container's trail has no refusal" bash -c "! grep -q refused '$WORK/$ID.jsonl' 2>/dev/null"
