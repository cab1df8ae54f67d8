#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, a datagram's real destination (issue 30, class 3): in the host's network namespace, a UDP
# datagram to an allowed address (192.0.2.1, 2001:db8::1) sent out the loopback device, by a cmsg
# (IP_PKTINFO, IPV6_PKTINFO, on an unconnected or a connected socket) or a socket option (SO_BINDTODEVICE,
# SO_BINDTOIFINDEX, IP_UNICAST_IF, IPV6_UNICAST_IF), is delivered to a local socket of the host, whatever
# address it carries. The cgroup egress program, attached under allowed_hosts by every backend, judges
# where each packet really goes (device and destination), for unconnected sockets too; a socket bound to
# the loopback device is refused at connect and sendmsg. The listener is this test's own, bound (with
# IP_FREEBIND) to the allowed address. Controls: without a policy the datagram reaches the listener (a
# variant the kernel does not deliver without the policy either is skipped); under the policy the same
# datagram sent the ordinary way is not refused.
# vm-timeout: 300
# rule-kinds: allowed_hosts
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-device
p=/bin/cerberus-probe
host_probe="$(command -v cerberus-probe)"
port=$((40000 + $$ % 1000))
policy="{\"allowed_hosts\": [\"192.0.2.0/24:$port\", \"[2001:db8::1]:$port\"]}"
heard=/tmp/policy-device-listener.$$

# device_run POLICY|"" ARG...: ARG... in a container in the host's network namespace.
device_run() {
    policy_or_plain_bundle "$bundle" "$1" || return 99
    shift
    bundle_set_args "$bundle" "$@" && bundle_edit "$bundle" '.linux.namespaces |= map(select(.type != "network"))' ||
        return 99
    vm_run_bundle "$bundle"
}

# listened POLICY|"" HOST ARG...: runs ARG... as device_run does while this test's listener waits at HOST
# (port $port); prints the command's output, then what the listener heard ("received" or "nothing").
listened() {
    policy="$1" host="$2"
    shift 2
    : >"$heard"
    "$host_probe" udp-listen "$host" "$port" 30 >"$heard" &
    listener=$!
    tries=0
    until grep -q listening "$heard" || [ "$tries" -ge 40 ]; do sleep 0.05; tries=$((tries + 1)); done
    device_run "$policy" "$@"
    sleep 0.3 # a datagram sent is on the listener's queue by now
    kill "$listener" 2>/dev/null
    wait "$listener" 2>/dev/null
    if grep -q received "$heard"; then echo received; else echo nothing; fi
}

# delivered CHECK HOW HOST: without a policy the datagram reaches the host's listener; under the policy it
# is refused (EPERM) and the listener hears nothing.
delivered() {
    check="$1" how="$2" host="$3"
    vm_run listened "" "$host" $p send-via "$how" "$host" "$port"
    case "$VM_STDOUT" in
    *received) vm_ok "control, $check, without a policy" ;;
    *)
        vm_skip "$check" "the kernel does not deliver it to the host's listener without the policy either: $VM_STDOUT"
        return
        ;;
    esac
    vm_run listened "$policy" "$host" $p send-via "$how" "$host" "$port"
    case "$VM_STDOUT" in
    *EPERM*nothing) vm_ok "$check" ;;
    *) vm_fail "$check" "expected EPERM and nothing heard; $(vm__said)" ;;
    esac
}

for family in 192.0.2.1 2001:db8::1; do
    v=4
    [ "$family" = 192.0.2.1 ] || v=6
    delivered "IPv$v PKTINFO cmsg naming lo" pktinfo "$family"
    delivered "IPv$v PKTINFO cmsg naming lo, on a connected socket" connected-pktinfo "$family"
    delivered "IPv$v SO_BINDTODEVICE lo" bindtodevice "$family"
    delivered "IPv$v SO_BINDTOIFINDEX of lo" bindtoifindex "$family"
    delivered "IPv$v UNICAST_IF of lo" unicast-if "$family"
done

# Control under the policy: the same datagram, sent the ordinary way to the allowed address, is not refused.
vm_expect_not_denied "a datagram to the allowed address, the ordinary way" device_run "$policy" \
    $p send-via plain 192.0.2.1 "$port"

rm -rf "$bundle" "$heard"
exit 0
