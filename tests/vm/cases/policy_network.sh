#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, network rules: connect and unconnected sendto, IPv4 and IPv6, TCP and UDP, CIDRs and port
# ranges, raw sockets; the same actions succeed in audit mode. The container has its own network namespace
# with only lo, so an allowed destination fails later (no route) while a denied one gets EPERM.
# vm-timeout: 300
# rule-kinds: allowed_hosts raw_sockets
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-net

# policy_run POLICY ARG...: runs the args in a fresh container under the policy, with CAP_NET_RAW.
policy_run() { net_policy_run "$bundle" "$@"; }

enforce='{"allowed_hosts": ["192.0.2.0/24:443", "198.51.100.7:1000-2000", "[2001:db8::1]:443", "2001:db8:1::/48"]}'
audit='{"mode": "audit", "allowed_hosts": ["192.0.2.1:443"]}'
p=/bin/cerberus-probe

vm_expect_not_denied "tcp4 allowed by cidr" policy_run "$enforce" $p connect tcp 192.0.2.9 443
vm_expect_errno "tcp4 other port denied" EPERM policy_run "$enforce" $p connect tcp 192.0.2.9 444
vm_expect_errno "tcp4 outside denied" EPERM policy_run "$enforce" $p connect tcp 203.0.113.9 443
vm_expect_not_denied "tcp4 port range allowed" policy_run "$enforce" $p connect tcp 198.51.100.7 1500
vm_expect_errno "tcp4 port range end denied" EPERM policy_run "$enforce" $p connect tcp 198.51.100.7 2001
vm_expect_errno "udp4 connect denied" EPERM policy_run "$enforce" $p connect udp 203.0.113.9 53
vm_expect_not_denied "udp4 sendto allowed" policy_run "$enforce" $p sendto udp 192.0.2.9 443
vm_expect_errno "udp4 sendto denied" EPERM policy_run "$enforce" $p sendto udp 203.0.113.9 53
vm_expect_not_denied "tcp6 allowed" policy_run "$enforce" $p connect tcp 2001:db8::1 443
vm_expect_errno "tcp6 other port denied" EPERM policy_run "$enforce" $p connect tcp 2001:db8::1 80
vm_expect_not_denied "tcp6 cidr allowed" policy_run "$enforce" $p connect tcp 2001:db8:1::77 8080
vm_expect_errno "tcp6 outside denied" EPERM policy_run "$enforce" $p connect tcp 2001:db8:2::1 443
vm_expect_errno "udp6 sendto denied" EPERM policy_run "$enforce" $p sendto udp 2001:db8:2::1 53
vm_expect_errno "v4-mapped v6 checked as v4" EPERM policy_run "$enforce" $p connect tcp ::ffff:203.0.113.9 443
vm_expect_errno "raw socket refused" EPERM policy_run "$enforce" $p raw-socket

# Its own network namespace: loopback is the container's own and stays reachable.
vm_run policy_run "$enforce" $p connect tcp 127.0.0.1 9
case "$VM_STDOUT" in
*EPERM*) vm_fail "own loopback reachable" "$VM_STDOUT" ;;
*) vm_ok "own loopback reachable" ;;
esac

vm_expect_not_denied "audit tcp4 allowed" policy_run "$audit" $p connect tcp 203.0.113.9 443
vm_expect_not_denied "audit udp4 sendto allowed" policy_run "$audit" $p sendto udp 203.0.113.9 53
vm_expect_not_denied "audit tcp6 allowed" policy_run "$audit" $p connect tcp 2001:db8:2::1 443
vm_expect_output "audit raw socket allowed" ok policy_run "$audit" $p raw-socket

rm -rf "$bundle"
exit 0
