#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The OCI hook (oci-hooks/) where the kernel enforces: runc runs a bundle whose createRuntime and
# poststop hooks are cerberus-hook, as Podman and CRI-O add them from hooks.d. The policed container's
# connect is denied (the same bundle without the policy annotation is the control), the denial reaches
# the container's audit trail, and after runc deletes the container no map entry, registry entry or
# hook record is left.
# vm-timeout: 180
. /vm/lib.sh

vm_has_probe && [ -x /usr/local/bin/cerberus-hook ] && command -v runc >/dev/null || exit 0
bundle=/tmp/bundle-oci-hook
hook_root=/run/cerberus-hook
make_bundle "$bundle" /bin/cerberus-probe connect tcp 203.0.113.9 443 || exit 1
bundle_edit "$bundle" '.process.noNewPrivileges = true | .hooks = {
    "createRuntime": [{"path": "/usr/local/bin/cerberus-hook", "args": ["cerberus-hook", "create-runtime"]}],
    "poststop": [{"path": "/usr/local/bin/cerberus-hook", "args": ["cerberus-hook", "poststop"]}]}' || exit 1

vm_expect_errno "runc without a policy: the connect is not denied (the control)" ENETUNREACH \
    runc run --bundle "$bundle" oci-hook-control
runc delete --force oci-hook-control >/dev/null 2>&1
vm_check "the hook kept no record of the unpoliced container" sh -c "[ -z \"\$(ls -A $hook_root 2>/dev/null)\" ]"

bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"allowed_hosts": ["192.0.2.1:443"]}' || exit 1
rm -f /var/log/cerberus/oci-hook-policed.jsonl
vm_expect_errno "runc with the hook and a policy: the connect is denied" EPERM runc run --bundle "$bundle" oci-hook-policed
runc delete --force oci-hook-policed >/dev/null 2>&1
vm_expect_contains "the denial is in the container's trail" '"op":"connect"' cat /var/log/cerberus/oci-hook-policed.jsonl
for map in cerb_policies cerb_net4 cerb_net6 cerb_paths; do
    vm_expect_output "no $map entry left after runc delete" 0 \
        sh -c "bpftool map dump pinned $(pin_dir)/$map -j | jq length"
done
vm_check "no hook record left" sh -c "[ -z \"\$(ls -A $hook_root 2>/dev/null)\" ]"
vm_check "no registry entry left" sh -c "[ -z \"\$(ls -A $(audit_run_dir)/containers 2>/dev/null)\" ]"
rm -rf "$bundle"
exit 0
