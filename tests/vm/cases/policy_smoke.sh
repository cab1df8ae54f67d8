#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, one denial per rule kind with its control, under one policy: the short set CI runs on the
# lane's other kernels (tests/vm/test-kernels.sh --smoke), where the programs loaded are the variants
# written for that kernel's hook prototypes. The other policy_*.sh cases go through each kind in depth.
# vm-timeout: 300
# rule-kinds: allowed_hosts paths path_changes allowed_bins forbidden_caps escalation
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-smoke

# smoke_run POLICY|"" ARG...: the args in a fresh container with CAP_CHOWN and CAP_SYS_ADMIN (what the
# policy forbids or refuses must be refused by it, not by a missing capability), /workspace and /data.
smoke_run() {
    policy_or_plain_bundle "$bundle" "$@" || return 99
    bundle_edit "$bundle" '.process.capabilities = ({"bounding": $c, "effective": $c, "permitted": $c})' \
        --argjson c '["CAP_CHOWN", "CAP_SYS_ADMIN", "CAP_DAC_OVERRIDE"]'
    r="$bundle/rootfs"
    mkdir -p "$r/workspace" "$r/data"
    echo ok >"$r/workspace/ok"
    echo outside >"$r/data/outside"
    cp "$r/bin/cerberus-probe" "$r/workspace/probe-copy"
    vm_run_bundle "$bundle"
}

policy='{"allowed_hosts": ["192.0.2.1:443"], "allowed_paths": ["/workspace", "/tmp", "/dev"],
         "read_only_paths": ["/bin", "/usr", "/sbin", "/etc", "/proc"],
         "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"], "forbidden_caps": ["CAP_CHOWN"]}'
p=/bin/cerberus-probe

# The backend this boot is for holds the policy: auto's choice (or the one asked for) is recorded in the
# container's state, so a set of programs the kernel refused cannot pass unseen under another backend.
policy_or_plain_bundle "$bundle" "$policy" sleep 60
cerberus run -d --bundle "$bundle" smoke-backend </dev/null >/dev/null 2>&1
vm_expect_output "the policy is enforced by $POLICY_BACKEND" "$POLICY_BACKEND" \
    jq -r .enforcement "$CERBERUS_STATE/smoke-backend/state.json"
cerberus delete --force smoke-backend >/dev/null 2>&1

vm_expect_not_denied "allowed host" smoke_run "$policy" $p connect tcp 192.0.2.1 443
vm_expect_errno "other host denied" EPERM smoke_run "$policy" $p connect tcp 203.0.113.9 443
vm_expect_output "allowed path read" ok smoke_run "$policy" $p read /workspace/ok
vm_expect_output "control: read outside without a policy" ok smoke_run "" $p read /data/outside
vm_expect_errno "read outside denied" EACCES smoke_run "$policy" $p read /data/outside
vm_expect_output "mkdir inside" ok smoke_run "$policy" $p mkdir /workspace/new
vm_expect_errno "mkdir outside denied" "$(denial_errno EACCES EROFS)" smoke_run "$policy" $p mkdir /data/new
vm_expect_output "utime inside" ok smoke_run "$policy" $p inode utime /workspace/ok
vm_expect_errno "utime outside denied" "$(denial_errno EACCES EROFS)" smoke_run "$policy" $p inode utime /data/outside
vm_expect_output "listed binary runs" ok smoke_run "$policy" $p exec /bin/cerberus-probe read /workspace/ok
vm_expect_errno "unlisted binary denied" EACCES smoke_run "$policy" $p exec /workspace/probe-copy ids
vm_expect_output "control: chown without a policy" ok smoke_run "" sh -c 'chown 1 /workspace/ok && echo ok'
vm_expect_errno "forbidden capability denied" EPERM smoke_run "$policy" chown 1 /workspace/ok
vm_expect_output "control: bpf() without a policy" ok smoke_run "" $p bpf
vm_expect_errno "bpf() denied" EPERM smoke_run "$policy" $p bpf
vm_expect_output "control: perf_event_open without a policy" ok smoke_run "" $p perf
vm_expect_errno "perf_event_open denied" EPERM smoke_run "$policy" $p perf
vm_expect_errno "new user namespace denied" EPERM smoke_run "$policy" $p unshare-user

rm -rf "$bundle"
exit 0
