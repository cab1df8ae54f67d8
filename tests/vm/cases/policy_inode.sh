#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, changes to a file that open nothing for writing (docs/threat-model.md, classes 2 and 6):
# times (utimensat on a path, on an O_PATH descriptor, futimens), xattrs (setxattr, fsetxattr,
# removexattr), a POSIX ACL making the file world-writable, mode and owner, each refused on a read-only, a
# denied and an unlisted file; and mprotect(PROT_EXEC) of an unlisted file mapped PROT_READ. Controls: the
# same change under allowed_paths (also on an overlay root, whose copy-up the kernel makes for the agent)
# and without a policy gives what it gives unpoliced. Under the landlock backend times, mode and owner are
# refused by the read-only mounts (EROFS) and xattrs by seccomp (EPERM, allowed paths included).
# vm-timeout: 400
# rule-kinds: path_changes exec_mappings
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-inode
p=/bin/cerberus-probe

# inode_rootfs DIR: the files the cases change.
inode_rootfs() {
    mkdir -p "$1/workspace" "$1/data" "$1/etc" "$1/usr/lib"
    echo ok >"$1/workspace/ok"
    echo secret >"$1/workspace/secret"
    echo ro >"$1/etc/ro"
    echo outside >"$1/data/outside"
    cp "$1/bin/busybox" "$1/workspace/blob"
    cp "$1/bin/busybox" "$1/usr/lib/blob"
}

# policy_run POLICY ARG...: runs the args in a fresh container under the policy ("" for none).
policy_run() {
    policy_or_plain_bundle "$bundle" "$@" || return 99
    inode_rootfs "$bundle/rootfs"
    vm_run_bundle "$bundle"
}

# overlay_run POLICY ARG...: the same, with the container's root an overlay whose lower layer holds the
# files: the agent's first change to one makes the kernel copy it up (setattr and xattrs on the upper layer,
# under the mounter's credentials), which must not be judged as the agent's change.
overlay_run() {
    policy_bundle "$bundle" "$@" || return 99
    inode_rootfs "$bundle/rootfs"
    mkdir -p "$bundle/upper" "$bundle/work" "$bundle/merged"
    mount -t overlay overlay -o "lowerdir=$bundle/rootfs,upperdir=$bundle/upper,workdir=$bundle/work" \
        "$bundle/merged" || return 98
    bundle_edit "$bundle" '.root.path = "merged"'
    vm_run_bundle "$bundle"
    status=$?
    umount "$bundle/merged"
    rm -rf "$bundle/upper" "$bundle/work"
    return "$status"
}

# same_as_unpoliced CHECK RUN POLICY ARG...: ok when RUN under POLICY prints what the same command prints
# without a policy (the file system may not support an xattr namespace: then both say so).
same_as_unpoliced() {
    check="$1" run="$2" policy="$3"
    shift 3
    vm_run policy_run "" "$@"
    unpoliced="$VM_STDOUT"
    case "$unpoliced" in
    ok | "errno=95 (EOPNOTSUPP)" | "errno=61 (ENODATA)") ;;
    *) vm_fail "$check" "without a policy: $(vm__said)"; return ;;
    esac
    vm_run "$run" "$policy" "$@"
    if [ "$VM_STDOUT" = "$unpoliced" ]; then vm_ok "$check"; else vm_fail "$check" "unpoliced '$unpoliced'; $(vm__said)"; fi
}

# no_xattrs CHECK: true (and a skip) where the backend refuses every xattr change under path rules.
no_xattrs() {
    cannot_hold landlock "$1" "Landlock has no right for xattrs: seccomp refuses them all under path rules (EPERM)"
}

paths='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/usr", "/sbin", "/etc", "/proc"],
        "denied_paths": ["/workspace/secret"]}'

# --- times ---------------------------------------------------------------------------------------------
vm_expect_output "utime allowed" ok policy_run "$paths" $p inode utime /workspace/ok
vm_expect_output "utime without a policy" ok policy_run "" $p inode utime /etc/ro
vm_expect_errno "utime read-only" "$(denial_errno EACCES EROFS)" policy_run "$paths" $p inode utime /etc/ro
vm_expect_errno "utime denied" "$(denial_errno EACCES EROFS)" policy_run "$paths" $p inode utime /workspace/secret
vm_expect_errno "utime outside" "$(denial_errno EACCES EROFS)" policy_run "$paths" $p inode utime /data/outside
vm_expect_output "utime O_PATH fd allowed" ok policy_run "$paths" $p inode utime-opath /workspace/ok
vm_expect_errno "utime O_PATH fd read-only" "$(denial_errno EACCES EROFS)" policy_run "$paths" $p inode utime-opath /etc/ro
vm_expect_errno "utime O_PATH fd denied" "$(denial_errno EACCES EROFS)" policy_run "$paths" $p inode utime-opath /workspace/secret
vm_expect_output "futimens allowed" ok policy_run "$paths" $p inode futimens /workspace/ok
vm_expect_errno "futimens read-only" "$(denial_errno EACCES EROFS)" policy_run "$paths" $p inode futimens /etc/ro
vm_expect_output "touch -d allowed" "" policy_run "$paths" touch -d 2000-01-01 /workspace/ok
vm_expect_errno "touch -d read-only" "$(denial_errno EACCES EROFS)" policy_run "$paths" touch -d 2000-01-01 /etc/ro

# --- mode and owner ------------------------------------------------------------------------------------
vm_check "chmod allowed" policy_run "$paths" chmod 0666 /workspace/ok
vm_expect_errno "chmod read-only" "$(denial_errno EACCES EROFS)" policy_run "$paths" chmod 0666 /etc/ro
vm_expect_errno "chmod denied" "$(denial_errno EACCES EROFS)" policy_run "$paths" chmod 0666 /workspace/secret
vm_check "chown allowed" policy_run "$paths" chown 0:0 /workspace/ok
vm_expect_errno "chown read-only" "$(denial_errno EACCES EROFS)" policy_run "$paths" chown 0:0 /etc/ro

# --- xattrs and ACLs -----------------------------------------------------------------------------------
for how in setxattr lsetxattr fsetxattr; do
    no_xattrs "$how user allowed" || same_as_unpoliced "$how user allowed" policy_run "$paths" $p inode $how /workspace/ok user.cerberus v
    vm_expect_errno "$how user read-only" "$(denial_errno EACCES EPERM)" policy_run "$paths" $p inode $how /etc/ro user.cerberus v
done
vm_expect_errno "setxattr user denied" "$(denial_errno EACCES EPERM)" policy_run "$paths" $p inode setxattr /workspace/secret user.cerberus v
vm_expect_errno "setxattr user outside" "$(denial_errno EACCES EPERM)" policy_run "$paths" $p inode setxattr /data/outside user.cerberus v
no_xattrs "removexattr allowed" || same_as_unpoliced "removexattr allowed" policy_run "$paths" $p inode removexattr /workspace/ok user.cerberus
vm_expect_errno "removexattr read-only" "$(denial_errno EACCES EPERM)" policy_run "$paths" $p inode removexattr /etc/ro user.cerberus
vm_expect_errno "removexattr denied" "$(denial_errno EACCES EPERM)" policy_run "$paths" $p inode removexattr /workspace/secret user.cerberus
no_xattrs "ACL allowed" || same_as_unpoliced "ACL allowed" policy_run "$paths" $p inode acl /workspace/ok
vm_expect_errno "ACL read-only" "$(denial_errno EACCES EPERM)" policy_run "$paths" $p inode acl /etc/ro
vm_expect_errno "ACL denied" "$(denial_errno EACCES EPERM)" policy_run "$paths" $p inode acl /workspace/secret

# --- on an overlay root: the kernel's copy-up is not the agent's change ---------------------------------
if grep -qw overlay /proc/filesystems; then
    vm_expect_output "overlay utime allowed" ok overlay_run "$paths" $p inode utime /workspace/ok
    vm_expect_output "overlay write allowed" ok overlay_run "$paths" $p write /workspace/ok
    no_xattrs "overlay ACL allowed" || same_as_unpoliced "overlay ACL allowed" overlay_run "$paths" $p inode acl /workspace/ok
    vm_check "overlay chmod allowed" overlay_run "$paths" chmod 0600 /workspace/ok
    vm_expect_errno "overlay utime read-only" "$(denial_errno EACCES EROFS)" overlay_run "$paths" $p inode utime /etc/ro
    vm_expect_errno "overlay ACL denied" "$(denial_errno EACCES EPERM)" overlay_run "$paths" $p inode acl /workspace/secret
else
    vm_skip "overlay root" "no overlay file system in this kernel"
fi

# --- mprotect(PROT_EXEC) of a file mapped PROT_READ -----------------------------------------------------
bins='{"allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"], "allowed_paths": ["/workspace", "/tmp", "/dev"],
       "read_only_paths": ["/bin", "/usr", "/etc", "/proc"]}'
vm_expect_output "mprotect exec without a policy" ok policy_run "" $p inode mprotect-exec /workspace/blob
vm_expect_output "mprotect exec under read_only_paths" ok policy_run "$bins" $p inode mprotect-exec /usr/lib/blob
vm_expect_output "mprotect exec of a listed binary" ok policy_run "$bins" $p inode mprotect-exec /bin/busybox
vm_expect_errno "mprotect exec of an unlisted file" EACCES policy_run "$bins" $p inode mprotect-exec /workspace/blob
cannot_hold landlock "mprotect exec of an unlisted file without path rules" \
    "Landlock does not see executable mappings; without writable paths no mount is noexec" ||
    vm_expect_errno "mprotect exec of an unlisted file without path rules" EACCES \
        policy_run '{"allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}' $p inode mprotect-exec /workspace/blob

rm -rf "$bundle"
exit 0
