#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, path rules: allowed, read-only and denied paths matched by whole components, directory
# listings outside them refused, and the bypasses (symlink, hard link, /proc/self/fd and /proc/self/root, "..", rename)
# failing; the same opens succeed in audit mode.
# Denied opens and changes give EACCES; under the landlock backend some give the file system's own errno
# (denial_errno: the read-only mounts and the cover over a denied path answer first).
# vm-timeout: 300
# rule-kinds: paths path_changes denied_paths
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-files

# policy_run POLICY ARG...: runs the args in a fresh container (rootfs with /workspace and /data) under the policy.
policy_run() {
    policy="$1"
    shift
    policy_bundle "$bundle" "$policy" "$@" || return 99
    r="$bundle/rootfs"
    mkdir -p "$r/workspace/sub" "$r/data" "$r/workspacex"
    echo ok >"$r/workspace/ok"
    echo secret >"$r/workspace/secret"
    echo outside >"$r/data/outside"
    echo x >"$r/workspacex/file"
    ln -s /data/outside "$r/workspace/link"
    vm_run_bundle "$bundle"
}

enforce='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/usr", "/sbin", "/etc", "/proc"],
          "denied_paths": ["/workspace/secret"]}'
audit='{"mode": "audit", "allowed_paths": ["/workspace", "/dev"], "read_only_paths": ["/bin", "/usr", "/sbin", "/proc"]}'
p=/bin/cerberus-probe

vm_expect_output "read allowed" ok policy_run "$enforce" $p read /workspace/ok
vm_expect_output "write allowed" ok policy_run "$enforce" $p write /workspace/new
vm_expect_output "read-only read" ok policy_run "$enforce" $p read /etc/passwd
vm_expect_errno "read-only write" "$(denial_errno EACCES EROFS)" policy_run "$enforce" $p write /etc/passwd
vm_expect_errno "outside denied" EACCES policy_run "$enforce" $p read /data/outside
vm_expect_errno "denied path wins" EACCES policy_run "$enforce" $p read /workspace/secret
vm_expect_errno "whole components only" EACCES policy_run "$enforce" $p read /workspacex/file
vm_expect_errno "symlink" EACCES policy_run "$enforce" $p read /workspace/link
vm_expect_errno "dotdot" EACCES policy_run "$enforce" $p read /workspace/../data/outside
vm_expect_errno "proc self root" EACCES policy_run "$enforce" $p read /proc/self/root/data/outside
# Through a directory fd the agent may hold (its control: the same fd reads an allowed file).
vm_expect_output "proc self fd control" ok policy_run "$enforce" sh -c 'exec 3</workspace; exec /bin/cerberus-probe read /proc/self/fd/3/ok'
vm_expect_errno "proc self fd" EACCES policy_run "$enforce" sh -c 'exec 3</workspace; exec /bin/cerberus-probe read /proc/self/fd/3/../data/outside'
vm_expect_errno "hard link out of a denied path" "$(denial_errno EACCES EXDEV)" policy_run "$enforce" ln /workspace/secret /workspace/alias
vm_expect_errno "hard link from outside" "$(denial_errno EACCES EXDEV)" policy_run "$enforce" ln /data/outside /workspace/alias
vm_expect_errno "rename from outside" EACCES policy_run "$enforce" mv /data/outside /workspace/moved
vm_expect_errno "rename of a denied file" "$(denial_errno EACCES EBUSY)" policy_run "$enforce" mv /workspace/secret /workspace/public
vm_check "rename inside" policy_run "$enforce" mv /workspace/ok /workspace/sub/ok
vm_expect_errno "unlink read-only" "$(denial_errno EACCES EROFS)" policy_run "$enforce" rm /etc/passwd
vm_expect_errno "truncate read-only" "$(denial_errno EACCES EROFS)" policy_run "$enforce" truncate -s 0 /etc/passwd
vm_expect_errno "mkdir outside" "$(denial_errno EACCES EROFS)" policy_run "$enforce" $p mkdir /data/new
vm_expect_output "mkdir inside" ok policy_run "$enforce" $p mkdir /workspace/newdir

# Listing a directory is reading it: the names outside allowed_paths and read_only_paths are not the
# agent's to see (docs/policy.md). Controls: the allowed and read-only directories list.
vm_expect_contains "list allowed" "names=" policy_run "$enforce" $p list /workspace
vm_expect_contains "list read-only" "names=" policy_run "$enforce" $p list /etc
vm_expect_errno "list outside" EACCES policy_run "$enforce" $p list /data
vm_expect_errno "list the root above the allowed paths" EACCES policy_run "$enforce" $p list /
vm_expect_errno "list through dotdot" EACCES policy_run "$enforce" $p list /workspace/..
audit_or_refused --contains "audit list outside" "names=" policy_run "$audit" $p list /data

audit_or_refused "audit outside read" ok policy_run "$audit" $p read /data/outside
audit_or_refused "audit read-only write" ok policy_run "$audit" $p write /bin/new-file

rm -rf "$bundle"
exit 0
