#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, allowed_bins: only the listed files are exec'd; a copy of an allowed binary, a memfd and
# execveat fail with EACCES; in audit mode they run.
# vm-timeout: 300
# rule-kinds: allowed_bins
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-exec

policy_run() {
    policy="$1"
    shift
    policy_bundle "$bundle" "$policy" "$@" || return 99
    mkdir -p "$bundle/rootfs/workspace"
    cp "$bundle/rootfs/bin/cerberus-probe" "$bundle/rootfs/workspace/probe-copy"
    vm_run_bundle "$bundle"
}

# busybox applets are symlinks to /bin/busybox: the kernel checks the file they resolve to.
enforce='{"allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"], "read_only_paths": ["/bin", "/usr", "/sbin", "/proc"],
          "allowed_paths": ["/workspace", "/dev", "/tmp"]}'
audit='{"mode": "audit", "allowed_bins": ["/bin/cerberus-probe"]}'
p=/bin/cerberus-probe

vm_expect_output "allowed binary" hi policy_run "$enforce" /bin/echo hi
vm_expect_output "allowed probe" ok policy_run "$enforce" $p exec /bin/cerberus-probe read /bin/busybox
vm_expect_errno "copied binary" EACCES policy_run "$enforce" $p exec /workspace/probe-copy ids
# Under landlock without vm.memfd_noexec (before Linux 6.3) seccomp refuses memfd_create itself.
memfd_errno=EACCES
[ "$POLICY_BACKEND" = landlock ] && [ ! -e /proc/sys/vm/memfd_noexec ] && memfd_errno=EPERM
vm_expect_errno "memfd exec" "$memfd_errno" policy_run "$enforce" $p memfd-exec /bin/cerberus-probe ids
vm_check_fails "first program not listed" policy_run '{"allowed_bins": ["/bin/cerberus-probe"]}' /bin/true

audit_runs --contains "audit copied binary runs" uid=0 policy_run "$audit" $p exec /workspace/probe-copy ids
audit_runs --contains "audit memfd runs" uid=0 policy_run "$audit" $p memfd-exec /bin/cerberus-probe ids

rm -rf "$bundle"
exit 0
