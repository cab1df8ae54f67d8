#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, every way into a container: a process that enters through `cerberus exec` (docker exec,
# kubectl exec) is not the init's descendant and must get the same file, network and escalation rules,
# no_new_privs and the dropped capabilities. The control execs the same into a container without a policy.
# vm-timeout: 300
# rule-kinds: paths allowed_hosts forbidden_caps escalation
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-entry
p=/bin/cerberus-probe
policy='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/etc", "/proc"],
         "allowed_hosts": ["192.0.2.1:443"], "forbidden_caps": ["CAP_CHOWN"]}'

# entered POLICY|"" ARG...: starts a container that sleeps, runs ARG... in it through `cerberus exec`,
# deletes it; the output is the exec'd process's.
entered() {
    policy="$1"
    shift
    make_bundle "$bundle" sleep 30 && bundle_edit "$bundle" '.root.readonly = false |
        .process.capabilities = ({"bounding": $c, "effective": $c, "permitted": $c}) | .process.noNewPrivileges = false' \
        --argjson c '["CAP_CHOWN", "CAP_KILL"]' || return 99
    [ -z "$policy" ] || bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy" || return 99
    mkdir -p "$bundle/rootfs/data" "$bundle/rootfs/workspace"
    echo outside >"$bundle/rootfs/data/outside"
    id="entry-$(cut -c1-8 /proc/sys/kernel/random/uuid)"
    cerberus run --detach --bundle "$bundle" "$id" >/dev/null 2>&1 || { echo "run failed"; return 98; }
    cerberus exec "$id" "$@"
    status=$?
    cerberus delete --force "$id" >/dev/null 2>&1
    return "$status"
}

vm_expect_output "control, exec reads outside without a policy" outside entered "" cat /data/outside
vm_expect_errno "exec'd process held to the file rules" EACCES entered "$policy" $p read /data/outside
vm_expect_output "exec'd process reads what is allowed" ok entered "$policy" $p read /etc/passwd
vm_expect_errno "exec'd process held to the network rules" EPERM entered "$policy" $p connect tcp 203.0.113.9 443
vm_expect_contains "exec'd process gets no_new_privs" "NoNewPrivs:	1" entered "$policy" grep NoNewPrivs /proc/self/status
vm_expect_output "control, exec keeps CAP_CHOWN without a policy" 1 entered "" sh -c \
    'v=$(awk "/^CapBnd/ { print \$2 }" /proc/self/status); echo $((0x$v & 1))'
vm_expect_output "exec'd process lacks the forbidden capability" 0 entered "$policy" sh -c \
    'v=$(awk "/^CapBnd/ { print \$2 }" /proc/self/status); echo $((0x$v & 1))'
vm_expect_errno "exec'd process cannot make a user namespace" EPERM entered "$policy" $p unshare-user

rm -rf "$bundle"
exit 0
