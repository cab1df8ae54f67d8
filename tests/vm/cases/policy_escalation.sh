#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, escalation paths: forbidden capabilities denied at use (EPERM) and dropped from the config,
# noNewPrivileges forced, and bpf(), perf_event_open, new user namespaces and raw sockets refused whenever a
# policy is present.
# vm-timeout: 300
# rule-kinds: forbidden_caps escalation raw_sockets
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-esc

policy_run() {
    policy="$1"
    shift
    policy_bundle "$bundle" "$policy" "$@" || return 99
    # A config that grants what the policy forbids: the policy must win.
    bundle_edit "$bundle" '.process.noNewPrivileges = false |
        .process.capabilities = ({"bounding": $c, "effective": $c, "permitted": $c, "inheritable": $c, "ambient": $c})' \
        --argjson c '["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_NET_RAW", "CAP_SETUID", "CAP_SETGID", "CAP_DAC_OVERRIDE"]'
    vm_run_bundle "$bundle"
}

# caps_run POLICY|"" ARG...: the same with CAP_SYS_ADMIN kept (no forbidden_caps), or without a policy.
caps_run() {
    policy_or_plain_bundle "$bundle" "$@" || return 99
    bundle_edit "$bundle" '.process.capabilities = ({"bounding": $c, "effective": $c, "permitted": $c})' \
        --argjson c '["CAP_SYS_ADMIN"]'
    vm_run_bundle "$bundle"
}

policy='{"forbidden_caps": ["CAP_CHOWN", "CAP_SYS_ADMIN"]}'
p=/bin/cerberus-probe

vm_expect_errno "forbidden cap denied" EPERM policy_run "$policy" chown 1 /bin/cerberus-probe
vm_expect_output "forbidden caps dropped from every set" dropped policy_run "$policy" sh -c \
    'for v in $(awk "/^Cap(Inh|Prm|Eff|Bnd|Amb)/ { print \$2 }" /proc/self/status); do
         [ $((0x$v & 0x200001)) -eq 0 ] || exit 1
     done; echo dropped'
vm_expect_contains "noNewPrivileges forced" "NoNewPrivs:	1" policy_run "$policy" grep NoNewPrivs /proc/self/status
vm_expect_errno "bpf() denied" EPERM policy_run "$policy" $p bpf
vm_expect_errno "new user namespace denied" EPERM policy_run "$policy" $p unshare-user
# The hooks themselves, with the capability that lets the calls through: their prototypes differ between
# kernels, and each kernel gets the program written for its own.
hosts='{"allowed_hosts": ["192.0.2.1:443"]}'
vm_expect_output "control: bpf() with CAP_SYS_ADMIN without a policy" ok caps_run "" $p bpf
vm_expect_errno "bpf() with CAP_SYS_ADMIN denied" EPERM caps_run "$hosts" $p bpf
vm_expect_output "control: perf_event_open with CAP_SYS_ADMIN without a policy" ok caps_run "" $p perf
vm_expect_errno "perf_event_open with CAP_SYS_ADMIN denied" EPERM caps_run "$hosts" $p perf
vm_expect_output "raw socket without allowed_hosts" ok policy_run "$policy" $p raw-socket
vm_expect_errno "raw socket with allowed_hosts" EPERM policy_run '{"allowed_hosts": []}' $p raw-socket

rm -rf "$bundle"
exit 0
