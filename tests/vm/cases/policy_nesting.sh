#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, nesting (issue 22 class 5): with a writable cgroupfs of its own, an agent that makes sub-cgroups
# 8, 16 and 64 levels deep and moves itself to the deepest stays policed: the programs look for a policy in
# every ancestor of the task's cgroup, however deep. Controls: without a policy the same agent, as deep, makes
# a user namespace; with the policy, a host the policy allows is not denied at that depth.
# vm-timeout: 300
# rule-kinds: allowed_hosts escalation
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-nesting
p=/bin/cerberus-probe

# The agent: LEVELS nested mkdirs in its cgroup2 root, a move of itself to the deepest one made, then ARG...
# It prints "depth=N" before running ARG.
cgroup2='cg=/cgroup2
[ -e $cg/cgroup.max.depth ] || cg=/cgroup2/unified
[ -e $cg/cgroup.max.depth ] || { echo "no cgroup2"; exit 97; }
'
descend="$cgroup2"'levels=$1; shift
d=$cg; n=0
while [ $n -lt $levels ] && mkdir "$d/n" 2>/dev/null; do d="$d/n"; n=$((n + 1)); done
echo $$ >"$d/cgroup.procs" || exit 98
echo "depth=$n"
exec "$@"'

# nesting_run POLICY|"" LEVELS ARG...: the agent in a container with its own cgroup namespace and a
# read-write cgroupfs at /cgroup2 (cgroup2 there, or at /cgroup2/unified on a hybrid host); no annotation
# when POLICY is empty.
nesting_run() {
    policy="$1" levels="$2"
    shift 2
    policy_or_plain_bundle "$bundle" "$policy" sh -c "$descend" sh "$levels" "$@" || return 99
    bundle_edit "$bundle" '.mounts += [{"destination": "/cgroup2", "type": "cgroup2", "source": "cgroup2"}] |
        if any(.linux.namespaces[]; .type == "cgroup") then . else .linux.namespaces += [{"type": "cgroup"}] end' ||
        return 99
    vm_run_bundle "$bundle"
}

policy='{"allowed_hosts": ["192.0.2.0/24:443"]}'
# A hybrid host's cgroupfs mount has only the v1 hierarchies, which a policy is not keyed on.
if [ "$(nesting_run "" 0 true)" = "no cgroup2" ]; then
    vm_skip "nesting" "the container's cgroupfs has no cgroup2 on this host"
    rm -rf "$bundle"
    exit 0
fi

for levels in 8 16 64; do
    vm_expect_contains "the agent moves itself $levels levels down" "depth=$levels" nesting_run "$policy" "$levels" true
    vm_expect_errno "new user namespace denied $levels levels down" EPERM \
        nesting_run "$policy" "$levels" $p unshare-user
    vm_expect_errno "connect outside allowed_hosts denied $levels levels down" EPERM \
        nesting_run "$policy" "$levels" $p connect tcp 203.0.113.9 443
    vm_expect_not_denied "connect to an allowed host $levels levels down" \
        nesting_run "$policy" "$levels" $p connect tcp 192.0.2.9 443
done
# Control: the same agent without a policy.
vm_check "without a policy: a new user namespace 64 levels down" nesting_run "" 64 $p unshare-user

rm -rf "$bundle"
exit 0
