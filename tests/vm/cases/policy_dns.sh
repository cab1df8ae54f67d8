#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, host names in allowed_hosts: the DNS gate (issue 17). A real resolver (dnsmasq, answers with a
# 1-second TTL) runs in a network namespace this case makes, which the containers join. Checked: an allowed
# name's answer is admitted (its port only) and a rotated answer replaces it once the TTL has run out; an
# unlisted name is REFUSED and written to the trail; a query sent straight to another resolver address, over
# UDP or TCP, IPv4 or IPv6, is steered to the gate and answered in that address's name; a wildcard matches one
# label or more and not its parent; an answer in a private range is not admitted unless the policy lists the
# range; audit mode answers everything; a gate that dies fails closed and a cerberus command restarts it; two
# containers with different names in one network namespace each resolve only their own; bad names are refused
# at create; delete leaves nothing. Each denial beside its control without the policy.
# vm-timeout: 420
# rule-kinds: allowed_hosts
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
p=/bin/cerberus-probe
work=/tmp/policy-dns
resolver=192.0.2.53
rm -rf "$work"
mkdir -p "$work"

command -v dnsmasq >/dev/null 2>&1 || { vm_fail "a resolver to test against" "dnsmasq is not installed"; exit 0; }

# hosts NAME=ADDRESS...: what the resolvers answer (they reread the file on SIGHUP).
resolvers=""
hosts() {
    : >"$work/hosts"
    for pair in "$@"; do echo "${pair#*=} ${pair%%=*}" >>"$work/hosts"; done
    [ -z "$resolvers" ] || kill -HUP $resolvers
    sleep 0.3
}
hosts svc.test=198.51.100.1 evil.test=198.51.100.66 a.wild.test=198.51.100.3 b.c.wild.test=198.51.100.3 \
    wild.test=198.51.100.4 private.test=10.9.9.9 v6.test=2001:db8::10

# network NAME: a network namespace (its path in $made: /proc/<holder>/ns/net) with a resolver on one of
# its addresses.
holders=""
network() {
    unshare -n sleep 100000 >/dev/null 2>&1 &
    holders="$holders $!"
    local netns="/proc/$!/ns/net"
    sleep 0.2
    nsenter --net="$netns" ip link set lo up
    nsenter --net="$netns" ip addr add "$resolver/32" dev lo
    nsenter --net="$netns" dnsmasq --keep-in-foreground --conf-file=/dev/null --no-resolv --no-hosts \
        --addn-hosts="$work/hosts" --listen-address="$resolver" --bind-interfaces --local-ttl=1 \
        --user=root --group=root --pid-file="$work/dnsmasq-$1.pid" --log-facility="$work/dnsmasq-$1.log" \
        >/dev/null 2>&1 &
    resolvers="$resolvers $!"
    sleep 0.5
    made="$netns"
}
network main
netns="$made"
network listed
listed_netns="$made"
network audit
audit_netns="$made"

cleanup() {
    for id in $started; do cerberus delete --force "$id" >/dev/null 2>&1; done
    kill $resolvers $holders 2>/dev/null
    wait $resolvers $holders 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
started=""

# start ID POLICY|"" [NETNS]: a detached container in the case's main network namespace (or NETNS; its
# resolv.conf names the resolver), under the policy or none.
start() {
    local bundle="$work/bundle-$1"
    make_bundle "$bundle" sleep 600 || return 99
    echo "nameserver $resolver" >"$bundle/rootfs/etc/resolv.conf"
    bundle_edit "$bundle" '.root.readonly = false |
        .linux.namespaces = [.linux.namespaces[] | if .type == "network" then .path = $ns else . end]' \
        --arg ns "${3:-$netns}" || return 99
    [ -z "$2" ] || bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$2" || return 99
    started="$started $1"
    cerberus run -d --bundle "$bundle" "$1" </dev/null
}

inside() {
    local id="$1"
    shift
    cerberus exec "$id" "$@"
}

names='{"allowed_hosts": ["svc.test:80", "*.wild.test:80", "private.test:80", "v6.test:80", "192.0.2.1:443"]}'
start plain "" || vm_fail "start a container without a policy" "exit $?"
start named "$names" || vm_fail "start a container whose policy names hosts" "exit $?"

# --- an allowed name, its answer admitted, the answer rotated -------------------------------------------
vm_expect_contains "an allowed name is answered through the gate" "rcode=NOERROR answers=198.51.100.1 " \
    inside named $p dns svc.test "$resolver" udp
vm_expect_not_denied "the answer's address is admitted" inside named $p connect tcp 198.51.100.1 80
vm_expect_errno "on the name's port only" EPERM inside named $p connect tcp 198.51.100.1 81
vm_expect_errno "an address no answer gave is not admitted" EPERM inside named $p connect tcp 198.51.100.2 80
vm_expect_not_denied "control: without the policy any address is reached" inside plain $p connect tcp 198.51.100.2 80
hosts svc.test=198.51.100.2 evil.test=198.51.100.66 a.wild.test=198.51.100.3 b.c.wild.test=198.51.100.3 \
    wild.test=198.51.100.4 private.test=10.9.9.9 v6.test=2001:db8::10
vm_expect_contains "the rotated answer is answered" "answers=198.51.100.2 " inside named $p dns svc.test "$resolver" udp
vm_expect_not_denied "the rotated address is admitted" inside named $p connect tcp 198.51.100.2 80
vm_run cerberus state named
case "$VM_STDOUT" in
*'"svc.test"'*'198.51.100.2'* | *'198.51.100.2'*'"svc.test"'*) vm_ok "cerberus state shows the admitted address" ;;
*) vm_fail "cerberus state shows the admitted address" "$(vm__said)" ;;
esac
sleep 3
vm_expect_errno "the old address is refused once its TTL has run out" EPERM inside named $p connect tcp 198.51.100.1 80

# --- names the policy does not list ----------------------------------------------------------------------
vm_expect_contains "an unlisted name is REFUSED" "rcode=REFUSED" inside named $p dns evil.test "$resolver" udp
vm_expect_contains "control: without the policy the resolver answers it" "answers=198.51.100.66" \
    inside plain $p dns evil.test "$resolver" udp
vm_expect_errno "and its address is not admitted" EPERM inside named $p connect tcp 198.51.100.66 80
vm_expect_contains "the refusal is in the trail, with the name" "evil.test" cerberus events --denials named
vm_expect_contains "the parent of a wildcard is REFUSED" "rcode=REFUSED" inside named $p dns wild.test "$resolver" udp
vm_expect_contains "a wildcard matches one label" "answers=198.51.100.3" inside named $p dns a.wild.test "$resolver" udp
vm_expect_contains "a wildcard matches more labels" "answers=198.51.100.3" \
    inside named $p dns b.c.wild.test "$resolver" udp
vm_expect_not_denied "a wildcard's answer is admitted" inside named $p connect tcp 198.51.100.3 80

# --- queries that ignore resolv.conf ---------------------------------------------------------------------
vm_expect_contains "a query to another resolver is steered to the gate, answered in its name" \
    "answers=198.51.100.2 from=203.0.113.53:53" inside named $p dns svc.test 203.0.113.53 udp
vm_expect_errno "control: without the policy that resolver is not reached" ENETUNREACH \
    inside plain $p dns svc.test 203.0.113.53 udp
vm_expect_contains "a v4-mapped query from an IPv6 socket too" "answers=198.51.100.2 from=::ffff:203.0.113.53:53" \
    inside named $p dns svc.test ::ffff:203.0.113.53 udp
vm_expect_contains "an unlisted name sent to another resolver is REFUSED" "rcode=REFUSED" \
    inside named $p dns evil.test 203.0.113.53 udp
vm_expect_contains "TCP queries are steered too" "rcode=NOERROR answers=198.51.100.2" \
    inside named $p dns svc.test 203.0.113.53 tcp
vm_expect_contains "an unlisted name over TCP is REFUSED" "rcode=REFUSED" inside named $p dns evil.test 203.0.113.53 tcp
vm_expect_errno "an IPv6 address no answer gave is not admitted" EPERM inside named $p connect tcp 2001:db8::10 80
vm_expect_contains "IPv6 queries are steered, AAAA answered" "answers=2001:db8::10 from=2001:db8::53:53" \
    inside named $p dns v6.test 2001:db8::53 udp AAAA
vm_expect_not_denied "the AAAA answer is admitted" inside named $p connect tcp 2001:db8::10 80

# --- answers in the host's networks ----------------------------------------------------------------------
vm_expect_contains "a private answer reaches the agent" "answers=10.9.9.9" inside named $p dns private.test "$resolver" udp
vm_expect_errno "but is not admitted" EPERM inside named $p connect tcp 10.9.9.9 80
vm_expect_contains "the trail says why" '"verdict":"not admitted"' cerberus events --denials --format json named
start listed '{"allowed_hosts": ["private.test:80", "10.9.9.0/24:81"]}' "$listed_netns" ||
    vm_fail "start a container whose policy lists the private range" "exit $?"
vm_run inside listed $p dns private.test "$resolver" udp
vm_expect_not_denied "control: a private answer is admitted where the policy lists its range" \
    inside listed $p connect tcp 10.9.9.9 80

# --- audit mode ------------------------------------------------------------------------------------------
start audit '{"mode": "audit", "allowed_hosts": ["svc.test:80"]}' "$audit_netns" || vm_fail "start an audit-mode container" "exit $?"
vm_expect_contains "audit mode answers an unlisted name" "answers=198.51.100.66" inside audit $p dns evil.test "$resolver" udp
vm_expect_contains "and says so in the trail" "evil.test" cerberus events --denials audit

# --- the gate's lifetime ---------------------------------------------------------------------------------
gate_dir="/run/cerberus-dns/$(basename "$(pin_dir)")" # this build's layout: others' may be beside it
gate_pid="$(cat "$gate_dir/gate.lock" 2>/dev/null | head -n1)"
if [ -n "$gate_pid" ] && kill "$gate_pid" 2>/dev/null; then
    sleep 0.5
    vm_run inside named $p dns svc.test "$resolver" udp
    case "$VM_STDOUT" in
    *rcode=NOERROR*) vm_fail "without the gate names do not resolve" "$(vm__said)" ;;
    *) vm_ok "without the gate names do not resolve" ;;
    esac
    vm_run cerberus state named
    vm_expect_contains "a cerberus command starts it again" "answers=198.51.100.2" \
        inside named $p dns svc.test "$resolver" udp
else
    vm_fail "the gate runs, its pid in its lock file" "no pid in $gate_dir/gate.lock"
fi

# --- two containers with names in one network namespace (a pod's) ----------------------------------------
# Each has the gate's sockets on a port of its own: its queries reach its own policy, never the other's.
start second '{"allowed_hosts": ["evil.test:80"]}' ||
    vm_fail "a second container with names joins a served network namespace" "exit $?"
vm_expect_contains "the second resolves its own name" "answers=198.51.100.66" \
    inside second $p dns evil.test "$resolver" udp
vm_expect_not_denied "and reaches its address" inside second $p connect tcp 198.51.100.66 80
vm_expect_contains "it is refused the first's name" "rcode=REFUSED" inside second $p dns svc.test "$resolver" udp
vm_expect_errno "and the first's address" EPERM inside second $p connect tcp 198.51.100.2 80
vm_expect_contains "the first still resolves its own name" "answers=198.51.100.2" \
    inside named $p dns svc.test "$resolver" udp
vm_expect_contains "and is refused the second's, over TCP too" "rcode=REFUSED" \
    inside named $p dns evil.test "$resolver" tcp
second_cgroup="$(cgroup_id_of second)"
cerberus delete --force second >/dev/null 2>&1
vm_expect_output "deleting the second leaves no entry of it, its gate port included" 0 policy_entries_of "$second_cgroup"
vm_expect_contains "and the first resolving" "answers=198.51.100.2" inside named $p dns svc.test "$resolver" udp

# --- bad input, and nothing left behind ------------------------------------------------------------------
bad() {
    vm_expect_refused "$1" "$2" net_policy_run "$work/bundle-bad" "$3" true
}
bad "a wildcard in the middle is refused, naming the entry" 'policy.allowed_hosts[1]' \
    '{"allowed_hosts": ["svc.test:80", "a.*.test:80"]}'
bad "a name with a prefix length is refused" 'policy.allowed_hosts[0]' '{"allowed_hosts": ["svc.test/24"]}'
bad "an empty label is refused" 'policy.allowed_hosts[0]' '{"allowed_hosts": ["a..test:80"]}'
make_bundle "$work/bundle-hostnet" true &&
    bundle_edit "$work/bundle-hostnet" '.annotations["io.cerberus.policy"] = $p |
        .linux.namespaces = [.linux.namespaces[] | select(.type != "network")]' --arg p "$names"
vm_expect_refused "names without a network namespace of the container's own are refused" \
    "network namespace of its own" vm_run_bundle "$work/bundle-hostnet"

cgroup="$(cgroup_id_of named)"
cerberus delete --force named >/dev/null 2>&1
vm_expect_output "delete leaves no entry of the container" 0 policy_entries_of "$cgroup"
vm_run ls /run/cerberus-dns/*/containers/
case "$VM_STDOUT" in
*"$cgroup"*) vm_fail "delete leaves no registration with the gate" "$VM_STDOUT" ;;
*) vm_ok "delete leaves no registration with the gate" ;;
esac
exit 0
