#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Agent policy, the system call ABIs (issue 30, class 4): each call a rule refuses, made the i386 way
# (int $0x80 from the 64-bit probe, i386 numbers; socketcall, i386's multiplexer, too) and the x86-64 way
# with garbage in the upper half of its int arguments (the kernel reads only the lower half), gets what
# the plain x86-64 call gets under the same policy: a denial. Under the landlock backend these rules are
# seccomp's; under the BPF LSM and fmod_ret hooks that see no ABI. Control for each: the i386 call without
# the policy is not refused.
# vm-timeout: 600
# rule-kinds: escalation raw_sockets path_changes other_processes
# vm-boots: bpf-lsm no-bpf-lsm landlock
. "${VM_LIB:-/vm/lib.sh}"

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-policy-abi
p=/bin/cerberus-probe

if [ "$($p abi 32 keyctl 2>&1)" = "errno=38 (ENOSYS)" ]; then
    vm_skip "abi" "no i386 system calls here (not x86-64, or ia32_emulation off)"
    exit 0
fi

paths='{"allowed_paths": ["/workspace", "/tmp"], "read_only_paths": ["/"]}'
hosts='{"allowed_hosts": ["192.0.2.0/24:443"]}'

# abi_run POLICY|"" SHELL: runs the shell text in a fresh container (CAP_NET_RAW, CAP_SYS_ADMIN and CAP_SYS_PTRACE granted,
# so that a refusal is the policy's, not the capability set's), with /etc/ro a read-only file.
abi_run() {
    policy_or_plain_bundle "$bundle" "$1" sh -c "$2" || return 99
    echo ro >"$bundle/rootfs/etc/ro"
    mkdir -p "$bundle/rootfs/workspace"
    bundle_edit "$bundle" '.process.capabilities[] += ["CAP_NET_RAW", "CAP_SYS_ADMIN", "CAP_SYS_PTRACE"]'
    vm_run_bundle "$bundle"
}

# Some machines end every int $0x80 of a 64-bit process with SIGSEGV, with or without a policy (a PVM guest
# was seen doing so): no i386 call can be made there, by the agent either; the x86-64 calls are still checked.
i386_killed=""
vm_run abi_run "" "$p abi 32 keyctl"
[ "$VM_STATUS" -lt 128 ] || i386_killed="int \$0x80 ends a 64-bit process with signal $((VM_STATUS - 128)) on this machine"

# ENOKEY: the BPF hooks refuse keyctl's search for a keyring, which keyctl answers so (policy_reach.sh).
is_denial() {
    case "$1" in *EPERM* | *EACCES* | *ENOKEY*) return 0 ;; *) return 1 ;; esac
}

# same_rule CHECK POLICY X86_64_CALL [I386_CALL]: under the policy, the call made the x86-64 way is
# denied, and the i386 call (I386_CALL: another spelling of it, socketcall) and the x86-64 call with the
# upper halves set get the same result; without the policy the i386 call is not refused.
same_rule() {
    check="$1" policy="$2" call="$3" call32="${4:-$3}"
    if [ -n "$i386_killed" ]; then
        vm_skip "$check" "$i386_killed"
        [ "$call32" = "$call" ] || return 0
        vm_run abi_run "$policy" "$p abi 64 $call; $p abi hi $call"
        set -- $(echo "$VM_STDOUT" | tr ' ' '_')
        if [ "$#" -ne 2 ] || ! is_denial "$1" || [ "$2" != "$1" ]; then
            vm_fail "$check: x86-64 with upper bits" "$(vm__said)"
        else
            vm_ok "$check: x86-64 with upper bits"
        fi
        return 0
    fi
    vm_run abi_run "$policy" "$p abi 64 $call; $p abi 32 $call32; $p abi hi $call"
    set -- $(echo "$VM_STDOUT" | tr ' ' '_')
    if [ "$#" -ne 3 ] || ! is_denial "$1"; then
        vm_fail "$check" "expected the x86-64 call denied; $(vm__said)"
    elif [ "$2" != "$1" ] || [ "$3" != "$1" ]; then
        vm_fail "$check" "x86-64: $1, i386: $2, x86-64 with upper bits: $3"
    else
        vm_ok "$check"
    fi
    vm_run abi_run "" "$p abi 32 $call32"
    if is_denial "$VM_STDOUT"; then vm_fail "$check: control without a policy" "$(vm__said)"; else vm_ok "$check: control without a policy"; fi
}

# Path rules: xattrs of a read-only file (seccomp refuses every xattr call under landlock; the inode hooks
# judge it as a write under the BPF LSM).
for call in setxattr lsetxattr removexattr lremovexattr fsetxattr fremovexattr; do
    same_rule "i386 $call of a read-only file" "$paths" "$call /etc/ro"
done
# io_uring is refused under landlock (its operations pass no seccomp check); the BPF hooks judge each one.
if [ "$POLICY_BACKEND" = landlock ]; then
    same_rule "i386 io_uring_setup under path rules" "$paths" io_uring_setup
    same_rule "i386 io_uring_setup under allowed_hosts" "$hosts" io_uring_setup
fi

# allowed_hosts: sockets that pass no address hook, and options that reroute packets.
same_rule "i386 packet socket" "$hosts" "socket packet 3 0"
same_rule "i386 socketcall packet socket" "$hosts" "socket packet 3 0" "socketcall socket packet 3 0"
same_rule "i386 raw inet socket" "$hosts" "socket inet 3 1"
same_rule "i386 setsockopt IP_OPTIONS" "$hosts" "setsockopt 0 4 8"
same_rule "i386 socketcall setsockopt IP_OPTIONS" "$hosts" "setsockopt 0 4 8" "socketcall setsockopt 0 4 8"
same_rule "i386 setsockopt IPV6_RTHDR" "$hosts" "setsockopt 41 57 24"

# What every policy refuses.
same_rule "i386 bpf" '{}' bpf
same_rule "i386 unshare of a user namespace" '{}' unshare
same_rule "i386 keyctl of the user keyring" '{}' keyctl
same_rule "i386 add_key" '{}' add_key
same_rule "i386 userfaultfd" '{}' userfaultfd

# The direct i386 socket call judges its arguments as x86-64's does: a UDP socket is made.
if [ -n "$i386_killed" ]; then
    vm_skip "i386 UDP socket under allowed_hosts" "$i386_killed"
    rm -rf "$bundle"
    exit 0
fi
vm_expect_output "i386 UDP socket under allowed_hosts" ok abi_run "$hosts" "$p abi 32 socket inet 2 0"
cannot_hold landlock "i386 socketcall UDP socket under allowed_hosts" \
    "seccomp cannot read socketcall's arguments: its socket and setsockopt are refused whole under allowed_hosts" ||
    vm_expect_output "i386 socketcall UDP socket under allowed_hosts" ok abi_run "$hosts" "$p abi 32 socketcall socket inet 2 0"

rm -rf "$bundle"
exit 0
