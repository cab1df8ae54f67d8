#!/usr/bin/env bats
# SPDX-License-Identifier: Apache-2.0
# The DNS gate at scale (issue 17): one gate serves 100 containers at once, each in a network namespace of
# its own with names of its own, and one policy of 1,000 names. The resolver (dnsmasq) sits in a network
# namespace this file makes, joined to each container's by a veth pair; every container asks it through the
# gate. tests/vm/cases/policy_dns.sh checks the gate's behaviour one rule at a time.

load helpers

containers=100

setup_file() {
    [ "$(id -u)" -eq 0 ] || skip "needs root"
    command -v dnsmasq >/dev/null || skip "dnsmasq is not installed (scripts/install-deps.sh)"
    "$CERBERUS" check | grep -q '^  landlock  usable' || skip "this host cannot run the landlock backend"
    export TAG="cdns$$"
    export WORK="$BATS_FILE_TMPDIR"
    ip netns add "$TAG-up"
    ip -n "$TAG-up" link set lo up
    ip -n "$TAG-up" addr add 192.0.2.53/32 dev lo
    {
        for i in $(seq 1 "$containers"); do echo "198.51.100.$i c$i.test"; done
        for i in $(seq 1 1000); do echo "198.18.$((i / 256)).$((i % 256)) n$i.bulk.test"; done
    } >"$WORK/hosts"
    ip netns exec "$TAG-up" dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --addn-hosts="$WORK/hosts" \
        --listen-address=192.0.2.53 --bind-interfaces --local-ttl=600 --user=root --group=root \
        --pid-file="$WORK/dnsmasq.pid" --log-facility="$WORK/dnsmasq.log"
    for i in $(seq 1 "$containers"); do
        ip netns add "$TAG-$i"
        ip link add "$TAG-u$i" netns "$TAG-up" type veth peer name eth0 netns "$TAG-$i"
        ip -n "$TAG-up" addr add "10.200.$i.1/24" dev "$TAG-u$i"
        ip -n "$TAG-up" link set "$TAG-u$i" up
        ip -n "$TAG-$i" addr add "10.200.$i.2/24" dev eth0
        ip -n "$TAG-$i" link set eth0 up
        ip -n "$TAG-$i" link set lo up
        ip -n "$TAG-$i" route add 192.0.2.53/32 via "10.200.$i.1"
    done
}

delete_all() {
    local id
    for id in $("$CERBERUS" --root "$WORK/state" list -q 2>/dev/null); do
        "$CERBERUS" --root "$WORK/state" delete --force "$id" >/dev/null 2>&1
    done
}

teardown() { delete_all; }

teardown_file() {
    delete_all
    [ ! -s "$WORK/dnsmasq.pid" ] || kill "$(cat "$WORK/dnsmasq.pid")"
    for i in $(seq 1 "$containers"); do ip netns del "$TAG-$i" 2>/dev/null; done
    ip netns del "$TAG-up" 2>/dev/null
    true
}

setup() {
    setup_bundle
    ROOT="$WORK/state"
    echo "nameserver 192.0.2.53" >"$BUNDLE/rootfs/etc/resolv.conf"
    set_args sleep 100000
}

# start_in I POLICY: a detached container in network namespace I under the policy, named dns-I.
start_in() {
    edit_config --arg ns "/run/netns/$TAG-$1" --arg p "$2" --arg cg "/cerberus-test/$TAG-$1" '
        .linux.cgroupsPath = $cg | .annotations["io.cerberus.policy"] = $p |
        .linux.namespaces = [.linux.namespaces[] | if .type == "network" then .path = $ns else . end]'
    cerb run -d -b "$BUNDLE" "dns-$1" </dev/null
}

@test "one gate serves 100 containers at once, each with names of its own" {
    for i in $(seq 1 "$containers"); do
        start_in "$i" "{\"allowed_hosts\": [\"c$i.test:443\"]}"
    done
    for i in $(seq 1 "$containers"); do
        run cerb exec "dns-$i" probe dns "c$i.test" 192.0.2.53 udp
        [[ "$output" == "rcode=NOERROR answers=198.51.100.$i "* ]] || { echo "dns-$i: $output"; false; }
        run cerb exec "dns-$i" probe connect tcp "198.51.100.$i" 443
        [[ "$output" != *EPERM* ]] || { echo "dns-$i admitted: $output"; false; }
        # Control: another container's name is not this one's.
        other=$((i % containers + 1))
        run cerb exec "dns-$i" probe dns "c$other.test" 192.0.2.53 udp
        [[ "$output" == "rcode=REFUSED"* ]] || { echo "dns-$i asked c$other.test: $output"; false; }
        run cerb exec "dns-$i" probe connect tcp "198.51.100.$other" 443
        [[ "$output" == *EPERM* ]] || { echo "dns-$i reached c$other's address: $output"; false; }
    done
}

@test "a policy of 1,000 names: each is answered and admitted" {
    policy=$(jq -cn '{allowed_hosts: [range(1; 1001) | "n\(.).bulk.test:443"]}')
    start_in 1 "$policy"
    run cerb exec dns-1 probe loop-dns 1000 "n%d.bulk.test" 192.0.2.53
    echo "$output"
    [[ "$output" == *"failed=0 "* ]]
    for i in 1 255 256 999 1000; do
        run cerb exec dns-1 probe connect tcp "198.18.$((i / 256)).$((i % 256))" 443
        [[ "$output" != *EPERM* ]] || { echo "n$i: $output"; false; }
    done
    # Control: an address of the same range no answer gave.
    run cerb exec dns-1 probe connect tcp 198.18.200.1 443
    [[ "$output" == *EPERM* ]]
}
