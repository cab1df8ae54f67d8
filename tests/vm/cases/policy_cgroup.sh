#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, leaving the container's cgroup (issue 30, class 1): the policy is bound to the container's
# cgroup (the programs look it up there; the socket programs are attached there), so an agent that moves
# itself out of that cgroup's subtree must not shed it. The config asks for no cgroup namespace; the agent
# moves itself to the root cgroup through the spec's read-write cgroupfs, through a cgroup2 it mounts
# itself (CAP_SYS_ADMIN), or into another container's cgroup, then sends a datagram outside allowed_hosts
# and reads a denied file. Under a policy the runtime gives the container a cgroup namespace of its own,
# so every cgroup view it has or mounts is rooted at its own cgroup, and the BPF backends refuse and
# report a migration across the subtree's edge; create refuses a cgroup namespace joined by path and a
# bind of the host's cgroup hierarchy. Controls: without a policy the same moves land outside.
# vm-timeout: 300
# rule-kinds: cgroup_exit
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-cgroup
other_bundle=/tmp/bundle-policy-cgroup-other
other_id="cgroup-other-$$"
other_cgroup="/cerberus-test-other-$$"
p=/bin/cerberus-probe
policy='{"allowed_hosts": ["192.0.2.0/24:443"], "denied_paths": ["/etc/secret"]}'
hosts_only='{"allowed_hosts": ["192.0.2.0/24:443"]}'

# The agent: finds a cgroup2 view (the spec's at /sys/fs/cgroup or /sys/fs/cgroup/unified; with "mount", one
# it mounts itself), writes its pid into the cgroup.procs of the cgroup DEST names there ("" the root),
# prints "moved" when the kernel took it, then runs the probe's sendto and read.
agent='how=$1 dest=$2
view=/sys/fs/cgroup
[ -e $view/cgroup.controllers ] || view=/sys/fs/cgroup/unified
if [ "$how" = mount ]; then
    mkdir -p /tmp/cg2 && mount -t cgroup2 none /tmp/cg2 && view=/tmp/cg2
elif [ ! -e $view/cgroup.controllers ]; then
    echo "no cgroup2 view"; exit 97
fi
echo $$ >"$view$dest/cgroup.procs" 2>/dev/null && echo moved
/bin/cerberus-probe sendto udp 203.0.113.9 53
/bin/cerberus-probe read /etc/secret'

# cgroup_run POLICY|"" HOW DEST: the agent in a container without a cgroup namespace in its config, with
# the cgroupfs read-write and CAP_SYS_ADMIN.
cgroup_run() {
    policy_or_plain_bundle "$bundle" "$1" sh -c "$agent" sh "$2" "$3" || return 99
    echo secret >"$bundle/rootfs/etc/secret"
    bundle_edit "$bundle" '.linux.namespaces |= map(select(.type != "cgroup")) |
        .mounts |= map(if .destination == "/sys/fs/cgroup" then .options -= ["ro"] else . end) |
        .process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN"])' || return 99
    vm_run_bundle "$bundle"
}

# shed CHECK HOW DEST POLICY: the control moves the agent out and its datagram and read go through; under
# the policy the datagram is refused (EPERM) and, when the policy denies it, the file is not read (EACCES).
# A policy that lets the agent mount (no path rules) has allowed_hosts alone.
shed() {
    check="$1"
    vm_run cgroup_run "" "$2" "$3"
    case "$VM_STDOUT" in
    "no cgroup2 view"*) vm_skip "$check" "the container's cgroupfs has no cgroup2 on this host"; return ;;
    moved*EPERM*) vm_fail "control, $check, without a policy" "the datagram was refused; $(vm__said)" ;;
    moved*) vm_ok "control, $check, without a policy" ;;
    *) vm_fail "control, $check, without a policy" "the agent did not move; $(vm__said)" ;;
    esac
    policy="$4"
    vm_run cgroup_run "$policy" "$2" "$3"
    set -- $(echo "$VM_STDOUT" | grep -v '^moved$')
    case "$policy" in *denied_paths*) read_expected=errno=13 ;; *) read_expected=ok ;; esac
    if [ "$1" = "errno=1" ] && [ "$3" = "$read_expected" ]; then
        vm_ok "$check"
    else
        vm_fail "$check" "expected the datagram refused (EPERM) and the read $read_expected; $(vm__said)"
    fi
}

shed "the agent moves to the root cgroup through the spec's cgroupfs" spec "" "$policy"
shed "the agent moves to the root cgroup of a cgroup2 it mounts" mount "" "$hosts_only"

# Another container's cgroup: a plain container, created and left waiting in its cgroup.
make_bundle "$other_bundle" sleep 60 && bundle_edit "$other_bundle" '.linux.cgroupsPath = $c' --arg c "$other_cgroup" &&
    cerberus create --bundle "$other_bundle" "$other_id" >/dev/null 2>&1 </dev/null
shed "the agent moves into another container's cgroup through the spec's cgroupfs" spec "$other_cgroup" "$policy"
shed "the agent moves into another container's cgroup of a cgroup2 it mounts" mount "$other_cgroup" "$hosts_only"
cerberus delete --force "$other_id" >/dev/null 2>&1

# What create refuses: a cgroup namespace joined by path, a bind of the host's cgroup hierarchy (unless
# read-only with CAP_SYS_ADMIN dropped, which could remount it writable).
host_cgroup2="$(grep -m1 ' cgroup2 ' /proc/mounts | cut -d' ' -f2)"
# refusal_run POLICY|"" FILTER: `true` in a container whose config the jq FILTER changed.
refusal_run() {
    policy_or_plain_bundle "$bundle" "$1" true && bundle_edit "$bundle" "$2" --arg cg "$host_cgroup2" &&
        vm_run_bundle "$bundle"
}
joined='.linux.namespaces |= map(select(.type != "cgroup")) | .linux.namespaces += [{"type": "cgroup", "path": "/proc/self/ns/cgroup"}]'
bound='.mounts += [{"destination": "/hostcg", "type": "bind", "source": $cg, "options": ["rbind"]}]'
bound_ro='.mounts += [{"destination": "/hostcg", "type": "bind", "source": $cg, "options": ["rbind", "ro"]}] |
    .process.capabilities |= with_entries(.value -= ["CAP_SYS_ADMIN"])'
vm_check "control, a cgroup namespace joined by path, without a policy" refusal_run "" "$joined"
vm_expect_refused "a cgroup namespace joined by path is refused" "linux.namespaces" refusal_run "$policy" "$joined"
vm_check "control, a bind of the host's cgroup2, without a policy" refusal_run "" "$bound"
vm_expect_refused "a bind of the host's cgroup2 is refused" "mounts[" refusal_run "$policy" "$bound"
vm_check "a read-only bind of the host's cgroup2 without CAP_SYS_ADMIN is accepted" refusal_run "$policy" "$bound_ro"

rm -rf "$bundle" "$other_bundle"
exit 0
