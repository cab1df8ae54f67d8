# SPDX-License-Identifier: Apache-2.0
# dns_gate.sh's pod mode, sourced by it (its helpers, $ID's bundle with
# allowed.example:443): a second container joins the first's network
# namespace, as a pod's containers do, with other.example:443.
echo "nameserver 192.0.2.53" > "$BUNDLE/rootfs/etc/resolv.conf"
expect "create the first container (allowed.example)" cerb create -b "$BUNDLE" "$ID"
pid=$(cerb state "$ID" | jq -r .pid)
first_cgroup=$(cgroup_of "$pid")
start_resolver "$pid"
# Holds the namespace past both deletes, to look for what is left in it.
nsenter --net="/proc/$pid/ns/net" sleep 600 &
holder_pid=$!
pod_netns=$(readlink "/proc/$pid/ns/net")
for _ in $(seq 50); do [ "$(readlink "/proc/$holder_pid/ns/net")" = "$pod_netns" ] && break; sleep 0.1; done
[ "$(readlink "/proc/$holder_pid/ns/net")" = "$pod_netns" ] || { fail "the namespace's holder entered it"; exit "$failures"; }
in_pod() { nsenter --net="/proc/$holder_pid/ns/net" "$@"; }
in_pod ip addr add 203.0.113.7/32 dev lo
in_pod ip addr add 203.0.113.8/32 dev lo
cerb start "$ID"

second="$ID-b"
mkdir -p "$WORK/bundle-b"
jq --arg root "$BUNDLE/rootfs" --arg cgroup "/cerberus-test/$second" --arg netns "/proc/$pid/ns/net" '
    .root.path = $root | .linux.cgroupsPath = $cgroup |
    .annotations["io.cerberus.policy"] = "{\"allowed_hosts\":[\"other.example:443\"]}" |
    .linux.namespaces = [.linux.namespaces[] | if .type == "network" then .path = $netns else . end]' \
    "$BUNDLE/config.json" > "$WORK/bundle-b/config.json"
expect "a second container with names joins the first's network namespace" cerb create -b "$WORK/bundle-b" "$second"
cerb start "$second"
second_cgroup=$(cgroup_of "$(cerb state "$second" | jq -r .pid)")
expect "control: it is in the first's network namespace" \
    [ "$(readlink "/proc/$(cerb state "$second" | jq -r .pid)/ns/net")" = "$(readlink "/proc/$pid/ns/net")" ]

first_port=$(gate_port_of "$first_cgroup")
second_port=$(gate_port_of "$second_cgroup")
expect "each has a gate port of its own ($first_port, $second_port)" \
    [ -n "$first_port" ] && [ -n "$second_port" ] && [ "$first_port" != "$second_port" ]
# gate_sockets PORT PROTOCOL-FLAG: how many of the gate's sockets listen on the port in the namespace.
gate_sockets() { in_pod ss -Hl"$2"n | grep -c -e "127.53.0.1:$1 " -e "\[::1\]:$1 "; }
expect "the gate holds both containers' sockets, UDP and TCP, IPv4 and IPv6" \
    [ "$(gate_sockets "$first_port" u)$(gate_sockets "$first_port" t)$(gate_sockets "$second_port" u)$(gate_sockets "$second_port" t)" = 2222 ]

# resolves ID NAME ADDRESS [SERVER [udp|tcp]]: the container's query for the name, sent to the resolver (the
# programs steer it to the container's gate port), is answered with the address; over UDP in the resolver's name.
resolves() {
    local from=" from=${4:-192.0.2.53}:53"
    [ "${5:-udp}" = udp ] || from=""
    output_has "rcode=NOERROR answers=$3$from" cerb exec "$1" probe dns "$2" "${4:-192.0.2.53}" "${5:-udp}"
}
refused() { output_has rcode=REFUSED cerb exec "$1" probe dns "$2" 192.0.2.53 "${3:-udp}"; }
not() { ! "$@"; }
check_both() { # check_both WHEN
    expect "$1: the first resolves its own name" resolves "$ID" allowed.example 203.0.113.7
    expect "$1: and is refused the second's" refused "$ID" other.example
    expect "$1: the second resolves its own name" resolves "$second" other.example 203.0.113.8
    expect "$1: and is refused the first's" refused "$second" allowed.example
}
check_both "in one namespace"
expect "the first reaches its name's address" output_has ECONNREFUSED cerb exec "$ID" probe connect tcp 203.0.113.7 443
expect "and not the second's" output_has EPERM cerb exec "$ID" probe connect tcp 203.0.113.8 443
expect "the second reaches its name's address" output_has ECONNREFUSED cerb exec "$second" probe connect tcp 203.0.113.8 443
expect "and not the first's" output_has EPERM cerb exec "$second" probe connect tcp 203.0.113.7 443
# Sent straight to the other's gate port (a loopback port of the namespace, reachable as any): judged by the
# other's names, admitting for the other only.
expect "the first asking the second's gate port straight is answered by the second's names" \
    output_has 203.0.113.8 cerb exec "$ID" nslookup -type=a other.example "127.53.0.1:$second_port"
expect "which admit nothing for the first" output_has EPERM cerb exec "$ID" probe connect tcp 203.0.113.8 443
expect "and refuse the first's own name there" \
    output_has REFUSED cerb exec "$ID" nslookup -type=a allowed.example "127.53.0.1:$second_port"
expect "over TCP the first resolves its own name" resolves "$ID" allowed.example 203.0.113.7 192.0.2.53 tcp
expect "and is refused the second's" refused "$ID" other.example tcp
expect "an IPv6 query of the second goes to its own gate too" \
    resolves "$second" other.example 203.0.113.8 2001:db8::53
expect "and the first's name is refused there" \
    output_has rcode=REFUSED cerb exec "$second" probe dns allowed.example 2001:db8::53 udp

# The gate restarted: each container's sockets bound again on the port the programs steer to.
gate_pid=$(head -n1 "$run_dir/gate.lock")
expect "the gate's pid is in its lock file ($gate_pid)" [ -n "$gate_pid" ]
{ kill -KILL "$gate_pid" && for _ in $(seq 50); do kill -0 "$gate_pid" 2>/dev/null || break; sleep 0.1; done; } 2>/dev/null
gate_pid=
expect "with the gate gone, the first's name does not resolve" not resolves "$ID" allowed.example 203.0.113.7
cerb state "$ID" >/dev/null # starts the gate again
for _ in $(seq 50); do [ "$(gate_sockets "$second_port" u)" = 2 ] && break; sleep 0.1; done
check_both "after the gate's restart"
expect "on the ports recorded before" \
    [ "$(gate_port_of "$first_cgroup") $(gate_port_of "$second_cgroup")" = "$first_port $second_port" ]

# A port taken while the gate is away (here by a process of the namespace outside both containers): the
# restarted gate cannot bind it again, and that container fails closed; the other is served.
gate_pid=$(head -n1 "$run_dir/gate.lock")
{ kill -KILL "$gate_pid" && for _ in $(seq 50); do kill -0 "$gate_pid" 2>/dev/null || break; sleep 0.1; done; } 2>/dev/null
gate_pid=
# nsenter itself, not in_pod (a function backgrounded runs in a subshell), and the system's python, so that $!
# is the squatter's pid (nsenter execs it; a version manager's shim would fork).
nsenter --net="/proc/$holder_pid/ns/net" /usr/bin/python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.53.0.1", int(sys.argv[1])))
time.sleep(600)' "$second_port" >/dev/null 2>&1 &
squatter_pid=$!
for _ in $(seq 50); do [ "$(gate_sockets "$second_port" u)" = 1 ] && break; sleep 0.1; done
expect "the second's port is taken while the gate is away" [ "$(gate_sockets "$second_port" u)" = 1 ]
cerb state "$ID" >/dev/null
for _ in $(seq 50); do [ "$(gate_sockets "$first_port" u)" = 2 ] && break; sleep 0.1; done
expect "the restarted gate serves the first" resolves "$ID" allowed.example 203.0.113.7
expect "the second's queries are refused, never sent to the port's holder" \
    output_has "EPERM" cerb exec "$second" probe dns other.example 192.0.2.53 udp
expect "the gate's log says why" grep -q "binding the DNS gate's port $second_port of $second again" "$run_dir/gate.log"
expect "its port is gone from cerb_dns_gates" [ -z "$(gate_port_of "$second_cgroup")" ]
kill "$squatter_pid"
wait "$squatter_pid" 2>/dev/null

expect "delete the second" cerb delete --force "$second"
expect "the first still resolves its own name" resolves "$ID" allowed.example 203.0.113.7
expect "the second's sockets are gone from the namespace" [ "$(gate_sockets "$second_port" u)$(gate_sockets "$second_port" t)" = 00 ]
expect "control: the first's are there" [ "$(gate_sockets "$first_port" u)$(gate_sockets "$first_port" t)" = 22 ]
second=
expect "delete the first" cerb delete --force "$ID"
expect "no gate port is left" [ "$(bpftool -j map dump pinned "$layout/cerb_dns_gates")" = '[]' ]
expect "no gate socket is left in the namespace" bash -c "! nsenter --net=/proc/$holder_pid/ns/net ss -Hlun | grep -q 127.53.0.1"
expect "nor cerb_names entries" map_empty
expect "nor registrations" [ -z "$(ls "$run_dir/containers")" ]
