#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, host names (issue 17), the kernel's half: under a policy that names hosts every DNS query
# (TCP or UDP to port 53, any address, IPv4, IPv6, IPv4-mapped) is steered to the gate's address in the
# container's own network namespace (the gate's answers and their source are policy_dns.sh's); no socket
# of the container may bind port 53; an address the gate admitted (a cerb_names entry, written here by hand) is
# reachable on its ports until it expires, and no entry outlives the container. A policy with names needs
# a network namespace of the container's own. Each refusal has its control beside it.
# vm-timeout: 300
# rule-kinds: allowed_hosts
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-dns
p=/bin/cerberus-probe
names='{"allowed_hosts": ["api.example.org:443", "192.0.2.0/24:443"]}'
plain='{"allowed_hosts": ["192.0.2.0/24:443"]}'

policy_run() { net_policy_run "$bundle" "$@"; }

# expect_steered CHECK POLICY ARG...: the query was sent to the gate's address in the container's
# own network namespace, not refused (EPERM) and not sent where it named (that namespace has no route:
# ENETUNREACH). The gate holds the address and ignores what is not a DNS query (EAGAIN when the probe waits
# for an answer, ok for a TCP connect); policy_dns.sh checks its answers.
expect_steered() {
    check="$1"
    shift
    vm_run policy_run "$@"
    case "$VM_STDOUT" in
    *EPERM* | *ENETUNREACH* | "") vm_fail "$check" "expected the query steered to the gate; $(vm__said)" ;;
    *) vm_ok "$check" ;;
    esac
}

# Binding the DNS port: refused under names (the socket could answer the gate's upstream queries).
vm_expect_errno "names: binding UDP port 53 refused" EPERM policy_run "$names" $p bind udp 0.0.0.0 53
vm_expect_errno "names: binding TCP [::]:53 refused" EPERM policy_run "$names" $p bind tcp :: 53
vm_expect_output "names: binding UDP port 5353 works" ok policy_run "$names" $p bind udp 0.0.0.0 5353
vm_expect_output "no names: binding UDP port 53 works" ok policy_run "$plain" $p bind udp 0.0.0.0 53
vm_expect_output "names, audit mode: binding UDP port 53 not refused" ok \
    policy_run '{"mode": "audit", "allowed_hosts": ["api.example.org:443"]}' $p bind udp 127.0.0.1 53

# Queries to a resolver the policy does not list are steered, not refused; other ports are refused.
expect_steered "names: UDP query by connect steered" "$names" $p udp-exchange 203.0.113.53 53 connect
expect_steered "names: UDP query by sendto steered" "$names" $p udp-exchange 203.0.113.53 53 sendto
expect_steered "names: v4-mapped UDP query steered" "$names" $p udp-exchange ::ffff:203.0.113.53 53 connect
expect_steered "names: TCP query steered" "$names" $p connect tcp 203.0.113.53 53
vm_expect_errno "names: UDP to port 54 refused" EPERM policy_run "$names" $p udp-exchange 203.0.113.53 54 connect
vm_expect_errno "names: sendto port 54 refused" EPERM policy_run "$names" $p udp-exchange 203.0.113.53 54 sendto
vm_expect_errno "names: TCP to port 54 refused" EPERM policy_run "$names" $p connect tcp 203.0.113.53 54
vm_expect_errno "no names: UDP query to an unlisted resolver refused" EPERM \
    policy_run "$plain" $p udp-exchange 203.0.113.53 53 connect
if policy_run "$names" cat /proc/net/if_inet6 2>/dev/null | grep -q '^0*1 '; then
    expect_steered "names: IPv6 UDP query steered" "$names" $p udp-exchange 2001:db8::53 53 connect
    vm_expect_errno "names: IPv6 UDP to port 54 refused" EPERM policy_run "$names" $p udp-exchange 2001:db8::53 54 connect
else
    vm_skip "names: IPv6 UDP query steered" "the container's loopback has no ::1"
fi

# run_created ID OUT: starts a created container and waits until it stops.
run_created() {
    cerberus start "$1" || return
    tries=0
    while [ "$(cerberus state "$1" | jq -r .status)" != stopped ] && [ "$tries" -lt 100 ]; do
        tries=$((tries + 1))
        sleep 0.1
    done
}

# le_bytes VALUE N: VALUE as N little-endian bytes, in bpftool's hex words.
le_bytes() {
    i=0 out=""
    while [ "$i" -lt "$2" ]; do
        out="$out 0x$(printf '%02x' $((($1 >> (8 * i)) & 255)))"
        i=$((i + 1))
    done
    echo "$out"
}

# admit CGROUP_ID ADDRESS_BYTES EXPIRES_NS: a cerb_names entry as the gate writes it, for port 443 only
# (directly: the proxied ports after them left empty).
admit() {
    bpftool map update pinned "$(pin_dir)/cerb_names" \
        key $(le_bytes "$1" 8) $2 \
        value $(le_bytes "$3" 8) $(le_bytes 1 4) $(le_bytes 443 2) $(le_bytes 443 2) $(le_bytes 0 64)
}

# Addresses the gate admitted: reachable on their ports until they expire.
policy_bundle "$bundle" "$names" sh -c "$p connect tcp 203.0.113.7 443; $p connect tcp 203.0.113.7 444; \
$p connect tcp 203.0.113.8 443; $p connect tcp ::ffff:203.0.113.7 443; $p connect tcp 2001:db8:5::7 443; \
$p connect tcp 2001:db8:5::8 443" || exit 0
cerberus create --bundle "$bundle" dns-admitted >/tmp/dns-admitted.out 2>&1 || vm_fail "create dns-admitted" "exit $?"
id="$(cgroup_id_of dns-admitted)"
now_ns="$(awk '{ printf "%.0f", $1 * 1000000000 }' /proc/uptime)" # CLOCK_BOOTTIME, as the programs read it
mapped="0 0 0 0 0 0 0 0 0 0 0xff 0xff"
v6="0x20 0x01 0x0d 0xb8 0 0x05 0 0 0 0 0 0 0 0 0"
if admit "$id" "$mapped 203 0 113 7" $((now_ns + 600000000000)) && admit "$id" "$mapped 203 0 113 8" 1 &&
    admit "$id" "$v6 7" $((now_ns + 600000000000)) && admit "$id" "$v6 8" 1; then
    run_created dns-admitted
    vm_expect_output "admitted addresses reachable on their ports only, until they expire" \
        "$(printf 'errno=101 (ENETUNREACH)\nerrno=1 (EPERM)\nerrno=1 (EPERM)\nerrno=101 (ENETUNREACH)\nerrno=101 (ENETUNREACH)\nerrno=1 (EPERM)')" \
        cat /tmp/dns-admitted.out
    vm_expect_output "the admitted addresses are in the kernel while the container exists" 4 names_entries_of "$id"
else
    vm_fail "admitted addresses reachable on their ports only, until they expire" "bpftool could not write cerb_names"
fi
cerberus delete --force dns-admitted >/dev/null 2>&1
vm_expect_output "no admitted address left after delete" 0 names_entries_of "$id"
vm_expect_output "no map entry left after delete" 0 policy_entries_of "$id"

# Names need a network namespace of the container's own: in the host's, the gate would serve the host.
policy_bundle "$bundle" "$names" $p connect tcp 192.0.2.1 443 || exit 0
bundle_edit "$bundle" '.linux.namespaces |= map(select(.type != "network"))'
vm_expect_failure "names without a network namespace refused at create" \
    "policy.allowed_hosts[0]: host names need the container in a network namespace of its own" \
    cerberus create --bundle "$bundle" dns-no-netns
vm_check_fails "the refused create left no state" cerberus state dns-no-netns
cgroot="$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)"
vm_expect_output "the refused create left no cgroup" "" find "$cgroot" -name '*dns-no-netns*'
bundle_edit "$bundle" '.linux.namespaces += [{"type": "network", "path": $ns}]' --arg ns "/proc/$$/ns/net"
vm_expect_failure "names in the host's network namespace (by path) refused at create" \
    "policy.allowed_hosts[0]: host names need the container in a network namespace of its own" \
    cerberus create --bundle "$bundle" dns-no-netns
bundle_edit "$bundle" '.linux.namespaces |= map(select(.type != "network"))'
bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$plain"
# (its output elsewhere: the created init holds what it inherits until it is deleted)
vm_check "control: addresses alone need no network namespace" \
    sh -c 'cerberus create --bundle "$1" dns-no-netns >/dev/null 2>&1' _ "$bundle"
cerberus delete --force dns-no-netns >/dev/null 2>&1

rm -rf "$bundle" /tmp/dns-echo.out /tmp/dns-echo.server /tmp/dns-admitted.out
exit 0
