#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, issue 22 class 1: a path rule keeps meaning the object it named at start. Renaming a parent of
# a denied or nested read-only entry (then reading or writing it under the new name, or swapping a forged file
# in under the old), chroot (a denied file read as /secret after chroot /etc, a read-only file written after
# chroot /var, an unlisted copy exec'd after chroot /workspace), a detached clone of a mount tree
# (open_tree OPEN_TREE_CLONE, fsmount) and unmounting all fail; a rule written through a symlink protects the file.
# Each has its control: the same action without the policy (or on a name no rule is bound to) works.
# The container holds CAP_SYS_ADMIN and CAP_SYS_CHROOT, so that only the policy stands in the way.
# vm-timeout: 400
# rule-kinds: paths path_changes denied_paths
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-names
p=/bin/cerberus-probe
wide='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/", "/workspace/ro"],
       "denied_paths": ["/workspace/dir/secret", "/etc/secret", "/var/run/secrets/token"],
       "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe"]}'
narrow='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/proc"]}'

# names_run POLICY|"" ARG...: runs ARG... in a fresh container under POLICY (none when empty). Its rootfs has
# /workspace/{dir/secret, ro/file, other/file, bin/cerberus-probe (an unlisted copy)}, /etc/secret,
# /var/tmp/file and /run/secrets/token, with /var/run -> ../run.
names_run() {
    names_bundle "$@" && vm_run_bundle "$bundle"
}

# names_bundle POLICY|"" ARG...: names_run's bundle, made and left in $bundle.
names_bundle() {
    policy="$1"
    shift
    make_bundle "$bundle" "$@" && bundle_edit "$bundle" '.root.readonly = false |
        .process.capabilities |= with_entries(.value += ["CAP_SYS_ADMIN", "CAP_SYS_CHROOT"])' || return 99
    [ -z "$policy" ] || bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy" || return 99
    r="$bundle/rootfs"
    mkdir -p "$r/workspace/dir" "$r/workspace/ro" "$r/workspace/other" "$r/workspace/bin" "$r/etc" "$r/var/tmp" \
        "$r/run/secrets" "$r/tmp"
    echo secret >"$r/workspace/dir/secret"
    echo ro >"$r/workspace/ro/file"
    echo other >"$r/workspace/other/file"
    echo secret >"$r/etc/secret"
    echo ro >"$r/var/tmp/file"
    echo token >"$r/run/secrets/token"
    rm -rf "$r/var/run" && ln -s ../run "$r/var/run"
    cp "$r$p" "$r/workspace/bin/cerberus-probe"
}

# expect_refused CHECK CMD...: ok when the command fails with a refusal (an errno the probe reports, or a
# tool's permission, read-only, busy or cross-device error: the backends refuse at different steps).
expect_refused() {
    local check="$1"
    shift
    if vm_run "$@"; then
        vm_fail "$check" "expected a refusal but it succeeded; $(vm__said)"
        return
    fi
    case "$VM_STDOUT$VM_STDERR" in
    *errno=* | *"ermission denied"* | *"not permitted"* | *"ead-only"* | *"busy"* | *"ross-device"*) vm_ok "$check" ;;
    *) vm_fail "$check" "expected a refusal; $(vm__said)" ;;
    esac
}

# attack CHECK CONTROL_OUTPUT POLICY ARG...: the control, ARG... without a policy, prints CONTROL_OUTPUT;
# under POLICY the same ARG... is refused.
attack() {
    local check="$1" control="$2" policy="$3"
    shift 3
    vm_expect_output "control, $check, without a policy" "$control" names_run "" "$@"
    expect_refused "$check" names_run "$policy" "$@"
}

# Renaming a parent of a rule, then the file under its new name; or a forged file under the old one.
attack "a parent of a denied entry renamed, then read" secret "$wide" sh -c \
    'mv /workspace/dir /workspace/moved && cat /workspace/moved/secret'
attack "a parent of a nested read-only entry renamed, then written" ok "$wide" sh -c \
    "mv /workspace/ro /workspace/rw && exec $p write /workspace/rw/file"
attack "a forged file swapped in under a read-only entry's name" forged "$wide" sh -c \
    'mv /workspace/ro /workspace/old && mkdir /workspace/ro && echo forged >/workspace/ro/file &&
     cat /workspace/ro/file'
vm_expect_output "control, a directory no rule is bound to renamed under the policy" other names_run "$wide" sh -c \
    'mv /workspace/other /workspace/other2 && cat /workspace/other2/file'

# chroot into a subtree, where every path names something else.
attack "/etc/secret read as /secret after chroot /etc" ok "$wide" $p chroot /etc read /secret
attack "a read-only file written after chroot /var" ok "$wide" $p chroot /var write /tmp/file
attack "an unlisted copy exec'd after chroot /workspace" ok "$wide" \
    $p chroot /workspace exec /bin/cerberus-probe read /bin/cerberus-probe

# A detached clone of a mount tree, where paths start at the clone's root.
attack "a denied file read through a clone of /workspace" ok "$wide" $p clone-read /workspace dir/secret
attack "an unlisted file read through a clone of /etc" ok "$narrow" $p clone-read /etc secret
attack "a file made in a detached tmpfs (fsopen, fsmount)" ok "$narrow" $p fsmount-write new

# Unmounting shows what a mount covered.
attack "umount" "" "$wide" umount /dev/mqueue

# A rule written through a symlink (/var/run -> ../run) protects the file, by either name.
attack "a rule through a symlink, the file by its resolved name" ok "$wide" $p read /run/secrets/token
attack "a rule through a symlink, the file by the rule's name" ok "$wide" $p read /var/run/secrets/token

# Audit mode lets each change through and reports it, with the rule that would have refused it.
audit="$(echo "$wide" | jq -c '.mode = "audit"')"
audit_id=vmtest-names-audit
# The container runs under a known id, so that its trail can be read after it.
names_audit_run() {
    names_bundle "$audit" sh -c "mv /workspace/dir /workspace/moved && $p chroot /etc read /secret &&
        $p clone-read /workspace moved/secret" || return 99
    # shellcheck disable=SC2086 # a list of words
    cerberus ${VM_CERBERUS_FLAGS:-} run --bundle "$bundle" "$audit_id"
    status=$?
    # shellcheck disable=SC2086
    cerberus ${VM_CERBERUS_FLAGS:-} delete --force "$audit_id" >/dev/null 2>&1
    return "$status"
}
audit_or_refused "audit: the rename, the chroot and the clone's read go through" "$(printf 'ok\nok')" names_audit_run
if [ "$POLICY_BACKEND" != landlock ]; then
    trail="/var/log/cerberus/$audit_id.jsonl"
    for expectation in 'rename a path rule is keyed on this name' 'chroot escalation is shut under a policy' \
        "open mount outside the container's mount namespace"; do
        vm_expect_output "audit: $expectation" true jq -s --arg e "$expectation" \
            'any(.[]; .type == "denial" and .verdict == "audit" and (.op + " " + .rule) == $e)' "$trail"
    done
fi

rm -rf "$bundle"
exit 0
