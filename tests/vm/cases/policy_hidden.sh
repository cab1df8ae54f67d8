#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, a denied path under an allowed prefix, and the ways to reach it by another name: through
# /proc/self/root, after renaming a parent, through a hard link made before the container started, through
# another mount of the same files, and by unmounting what covers it (the landlock backend hides such a path
# under an empty read-only mount; Landlock alone cannot deny a subpath of an allowed tree). The control runs
# the same reads without a policy.
# vm-timeout: 300
# rule-kinds: denied_paths
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-hidden
p=/bin/cerberus-probe
policy='{"allowed_paths": ["/workspace", "/mirror", "/tmp", "/dev"], "read_only_paths": ["/bin", "/etc", "/proc"],
         "denied_paths": ["/workspace/sub/secret"]}'

# hidden_run POLICY|"" EXTRA ARG...: /workspace/sub/secret holds "secret"; EXTRA is "link" (a hard link to it
# at /workspace/alias), "mirror" (the rootfs's /workspace mounted again at /mirror) or "-".
hidden_run() {
    policy="$1" extra="$2"
    shift 2
    make_bundle "$bundle" "$@" && bundle_edit "$bundle" '.root.readonly = false' || return 99
    [ -z "$policy" ] || bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy" || return 99
    r="$bundle/rootfs"
    mkdir -p "$r/workspace/sub" "$r/mirror"
    echo secret >"$r/workspace/sub/secret"
    case "$extra" in
    link) ln "$r/workspace/sub/secret" "$r/workspace/alias" ;;
    mirror) bundle_edit "$bundle" '.mounts += [{"destination": "/mirror", "type": "bind", "source": $s,
                                                "options": ["rbind"]}]' --arg s "$r/workspace" ;;
    esac
    vm_run_bundle "$bundle"
}

vm_expect_output "control, readable without a policy" secret hidden_run "" - cat /workspace/sub/secret
vm_expect_output "control, the alias is readable without a policy" secret hidden_run "" link cat /workspace/alias
vm_expect_output "control, the mirror is readable without a policy" secret hidden_run "" mirror cat /mirror/sub/secret

vm_expect_errno "denied path" EACCES hidden_run "$policy" - $p read /workspace/sub/secret
vm_expect_errno "through /proc/self/root" EACCES hidden_run "$policy" - $p read /proc/self/root/workspace/sub/secret
# The landlock backend pins the parent (a mount point of its own): the rename itself fails with EBUSY.
vm_expect_errno "after renaming a parent" "$(denial_errno EACCES EBUSY)" hidden_run "$policy" - sh -c \
    "mv /workspace/sub /workspace/moved && exec $p read /workspace/moved/secret"
vm_expect_errno "after unmounting what covers it" EACCES hidden_run "$policy" - sh -c \
    "umount /workspace/sub/secret 2>/dev/null; exec $p read /workspace/sub/secret"

vm_expect_refused "a hard link made before the start" "hard links" hidden_run "$policy" link $p read /workspace/alias
vm_expect_refused "another mount of the same files" "also reachable as /mirror/sub/secret" \
    hidden_run "$policy" mirror $p read /mirror/sub/secret
# Paths the spec masks (a file under /dev/null, directories under one shared tmpfs) are covered already:
# their covers' other names are no alias of what the rule names.
vm_expect_output "denied paths the spec masks" ok hidden_run \
    '{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/etc", "/proc"],
      "denied_paths": ["/proc/kcore", "/proc/acpi", "/proc/scsi"]}' - echo ok
# A denied path outside every allowed list: Landlock need not hide it, but a name inside one would reach it.
vm_expect_refused "a hard link of an unlisted denied file" "hard links" hidden_run \
    '{"allowed_paths": ["/workspace/alias", "/tmp", "/dev"], "read_only_paths": ["/bin", "/etc", "/proc"],
      "denied_paths": ["/workspace/sub/secret"]}' link $p read /workspace/alias

rm -rf "$bundle"
exit 0
