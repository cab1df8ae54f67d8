#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, denied and read-only paths keep their content and their place (issue 30, class 5): the
# agent renames a directory above a denied or read-only entry away (plainly, with RENAME_NOREPLACE, or
# exchanged with its own) and puts a forged one in its place, or removes or renames the entry itself and
# writes a forged one under its name. After the container the host must still find the real file under
# the rule's name (a forged .git/config would run its core.fsmonitor on the operator's next git command).
# Under the BPF LSM and fmod_ret the rename-of-a-parent rule refuses these; under landlock each directory
# between a kept entry and the mount above it is a mount point of its own, which no rename moves. Controls:
# the same steps without a policy leave the forged file on the host; a directory no rule is bound to is
# renamed under the policy.
# vm-timeout: 300
# rule-kinds: denied_paths path_changes
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-place
p=/bin/cerberus-probe
policy='{"allowed_paths": ["/workspace", "/tmp"], "read_only_paths": ["/", "/workspace/p/ro", "/workspace/notes"],
         "denied_paths": ["/workspace/.git/config", "/workspace/a/b/secret", "/workspace/token"]}'

# place_run POLICY|"" FILE SHELL: runs the shell text in a fresh container (under POLICY, none when empty),
# then prints what the host finds in FILE of its rootfs. The rootfs holds /workspace/.git/{config,HEAD},
# /workspace/a/b/secret, /workspace/token, /workspace/p/ro/file, /workspace/notes and /workspace/other/file,
# each reading "real", and /workspace/forged/{config,secret,file}, each reading "forged".
place_run() {
    policy_or_plain_bundle "$bundle" "$1" sh -c "$3" || return 99
    r="$bundle/rootfs/workspace"
    mkdir -p "$r/.git" "$r/a/b" "$r/p/ro" "$r/other" "$r/forged"
    for file in .git/config .git/HEAD a/b/secret token p/ro/file notes other/file; do echo real >"$r/$file"; done
    for file in config secret file; do echo forged >"$r/forged/$file"; done
    vm_run_bundle "$bundle" >/dev/null 2>&1
    cat "$r/$2"
}

# kept CHECK FILE SHELL: without a policy the steps leave FILE forged (the control); under the policy FILE
# is still the real one.
kept() {
    vm_expect_output "control, $1, without a policy" forged place_run "" "$2" "$3"
    vm_expect_output "$1" real place_run "$policy" "$2" "$3"
}

kept "a denied file's directory renamed away, a forged one renamed in" .git/config \
    "$p rename /workspace/.git /workspace/.git.old; $p rename /workspace/forged /workspace/.git"
kept "the same with RENAME_NOREPLACE" .git/config \
    "$p rename /workspace/.git /workspace/.git.old noreplace; $p rename /workspace/forged /workspace/.git noreplace"
kept "a denied file's directory exchanged with a forged one" .git/config \
    "$p rename /workspace/forged /workspace/.git exchange"
kept "a denied file two levels down, the top directory renamed away" a/b/secret \
    "$p rename /workspace/a /workspace/gone; mkdir -p /workspace/a/b; cp /workspace/forged/secret /workspace/a/b/secret"
kept "a read-only directory in a writable one, its parent renamed away" p/ro/file \
    "$p rename /workspace/p /workspace/gone; mkdir -p /workspace/p/ro; cp /workspace/forged/file /workspace/p/ro/file"
kept "a read-only directory exchanged with a forged one" p/ro/file \
    "$p rename /workspace/forged /workspace/p/ro exchange"
kept "a denied file removed, a forged one written in its place" token \
    "rm -f /workspace/token; echo forged >/workspace/token"
kept "a denied file renamed away, a forged one renamed in" token \
    "$p rename /workspace/token /workspace/token.old; $p rename /workspace/forged/secret /workspace/token"
kept "a read-only file renamed away, a forged one renamed in" notes \
    "$p rename /workspace/notes /workspace/notes.old; $p rename /workspace/forged/file /workspace/notes"

# Control under the policy: a directory no rule is bound to is still renamed, and the forged one put there.
vm_expect_output "a directory no rule is bound to, renamed under the policy" forged place_run "$policy" other/file \
    "$p rename /workspace/other /workspace/other.old && $p rename /workspace/forged /workspace/other"

rm -rf "$bundle"
exit 0
