#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, network rules against packets that go elsewhere than the address checked (issue 22,
# classes 3 and 4): UDP sends with sin_family AF_UNSPEC (sendto, sendmmsg), IPv6 routing headers and
# IPv4 source routes set by socket option (refused with EPERM) or by cmsg (dropped by the cgroup egress
# program: the send fails with EPERM), and inet protocols other than TCP and UDP (MPTCP, SCTP) and netlink
# sockets refused at creation. Each denial has a control: the same action without allowed_hosts works, or the
# same send without the route. Loopback traffic, replies to an accepted connection included, still
# flows under the egress program. The container has its own network namespace with only lo.
# vm-timeout: 400
# rule-kinds: allowed_hosts raw_sockets
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-reroute

# policy_run POLICY ARG...: runs the args in a fresh container under the policy, with CAP_NET_RAW (IPv4
# options need it).
policy_run() { net_policy_run "$bundle" "$@"; }

# control_then_denial CHECK CMD...: the command works without allowed_hosts (the control) and gets
# EPERM under the policy. When the control itself fails the kernel lacks the feature: skip, saying why.
control_then_denial() {
    name="$1"
    shift
    vm_run policy_run "$open" "$@"
    if [ "$VM_STDOUT" != ok ]; then
        vm_skip "$name" "the kernel refuses it without the policy too: $VM_STDOUT $VM_STDERR"
        return
    fi
    vm_ok "$name: control without allowed_hosts"
    vm_expect_errno "$name" EPERM policy_run "$enforce" "$@"
}

enforce='{"allowed_hosts": ["192.0.2.0/24:443", "[2001:db8::1]:443"]}'
audit='{"mode": "audit", "allowed_hosts": ["192.0.2.0/24:443", "[2001:db8::1]:443"]}'
open='{"allowed_paths": ["/"]}'
p=/bin/cerberus-probe

# Class 3: the family field says AF_UNSPEC, udp_sendmsg reads the address as IPv4.
vm_expect_errno "sendto AF_UNSPEC outside denied" EPERM policy_run "$enforce" $p sendto-unspec 203.0.113.9 53
vm_expect_errno "sendmmsg AF_UNSPEC outside denied" EPERM policy_run "$enforce" $p sendmmsg-unspec 203.0.113.9 53
vm_expect_not_denied "sendto AF_UNSPEC allowed host" policy_run "$enforce" $p sendto-unspec 192.0.2.9 443
vm_expect_not_denied "sendmmsg AF_UNSPEC allowed host" policy_run "$enforce" $p sendmmsg-unspec 192.0.2.9 443
vm_expect_output "sendto AF_UNSPEC own loopback" ok policy_run "$enforce" $p sendto-unspec 127.0.0.1 9

# Class 4, at the option: a clean EPERM where the route is set.
control_then_denial "IP_OPTIONS source route refused" $p route-option 4 127.0.0.1
control_then_denial "IPV6_RTHDR segment routing refused" $p route-option 6sr ::1
control_then_denial "IPV6_RTHDR type 2 refused" $p route-option 6 ::1

# Class 4, by cmsg: the address checked is allowed, the packet goes to the hop first (here the
# container's own loopback, so that it is routed at all); the egress program drops it.
control_then_denial "IP_RETOPTS cmsg source route dropped" $p route-cmsg 4 192.0.2.9 443 127.0.0.1
control_then_denial "IPV6_RTHDR type 2 cmsg dropped" $p route-cmsg 6 2001:db8::1 443 ::1
vm_expect_output "IPv4 without the route: own loopback" ok policy_run "$enforce" $p sendto udp 127.0.0.1 9
vm_expect_output "IPv6 without the route: own loopback" ok policy_run "$enforce" $p sendto udp ::1 9
vm_expect_output "audit: IP_RETOPTS cmsg let through" ok policy_run "$audit" $p route-cmsg 4 192.0.2.9 443 127.0.0.1

# The trail: the packet's event names where it was really sent (the hop), in audit mode too; the
# AF_UNSPEC datagram's names the IPv4 host it went to.
# trail_run ID POLICY ARG...: runs ARG... as container ID under the policy; prints its trail's events as
# [op, target, verdict].
trail_run() {
    id="$1" policy="$2"
    shift 2
    policy_bundle "$bundle" "$policy" "$@" || return 1
    bundle_edit "$bundle" '.process.capabilities[] += ["CAP_NET_RAW"]'
    rm -f "/var/log/cerberus/$id.jsonl"
    cerberus run --bundle "$bundle" "$id" >/dev/null 2>&1
    cerberus delete --force "$id" >/dev/null 2>&1
    jq -c 'select(.type == "denial") | [.op, .target, .verdict]' "/var/log/cerberus/$id.jsonl"
    rm -f "/var/log/cerberus/$id.jsonl"
}
vm_expect_contains "trail: the dropped packet, with its real destination" '["packet","127.0.0.1:443","denied"]' \
    trail_run "reroute-trail-$$" "$enforce" $p route-cmsg 4 192.0.2.9 443 127.0.0.1
vm_expect_contains "trail: audit reports the packet it let through" '["packet","127.0.0.1:443","audit"]' \
    trail_run "reroute-audit-$$" "$audit" $p route-cmsg 4 192.0.2.9 443 127.0.0.1
vm_expect_contains "trail: the AF_UNSPEC datagram as IPv4" '["sendmsg","203.0.113.9:53","denied"]' \
    trail_run "reroute-unspec-$$" "$enforce" $p sendto-unspec 203.0.113.9 53

# Replies to an accepted connection and connected datagrams on the container's own loopback.
vm_expect_output "loopback IPv4 both ways" ok policy_run "$enforce" $p loopback 127.0.0.1
vm_expect_output "loopback IPv6 both ways" ok policy_run "$enforce" $p loopback ::1

# Class 4, other protocols: only TCP and UDP (and UDP-Lite, sent by udp_sendmsg) inet sockets.
control_then_denial "MPTCP socket refused" $p socket inet stream 262
control_then_denial "MPTCP IPv6 socket refused" $p socket inet6 stream 262
control_then_denial "SCTP socket refused" $p socket inet stream 132
control_then_denial "SCTP seqpacket (protocol 0) refused" $p socket inet seqpacket 0
# Netlink (issue 30, class 5): its raw and datagram sockets are the same; neither is the agent's under allowed_hosts.
control_then_denial "netlink raw socket refused" $p socket netlink raw 0
control_then_denial "netlink datagram socket refused" $p socket netlink dgram 0
vm_expect_output "TCP socket allowed" ok policy_run "$enforce" $p socket inet stream 6
vm_expect_output "UDP socket allowed" ok policy_run "$enforce" $p socket inet6 dgram 17
# Linux 7.x has no UDP-Lite: where the kernel refuses it without the policy too, skip, saying why.
vm_run policy_run "$open" $p socket inet dgram 136
if [ "$VM_STDOUT" = ok ]; then
    vm_expect_output "UDP-Lite socket allowed" ok policy_run "$enforce" $p socket inet dgram 136
else
    vm_skip "UDP-Lite socket allowed" "the kernel refuses it without the policy too: $VM_STDOUT $VM_STDERR"
fi

rm -rf "$bundle"
exit 0
