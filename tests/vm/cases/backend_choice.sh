#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Which programs enforce a policy (--enforcement): with bpf in lsm= auto takes the BPF LSM, and fmod-ret
# can be asked for beside it, each set enforcing only its own containers (one event per denial); without
# bpf in lsm= (as Ubuntu ships) auto takes the same programs as fmod_ret on the security_ functions from
# Linux 6.12 on, and landlock before (docs/policy.md: 6.1 skipped them after churn), saying in the trail's
# first line why it passed the stronger ones over; asking for bpf-lsm fails closed, saying why and leaving
# nothing behind. The other policy cases run in
# both boots, under whichever set auto takes; a trampoline another tool filled is trampoline_full.sh.
# vm-timeout: 900
# vm-boots: bpf-lsm no-bpf-lsm
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-backend-choice
policy='{"allowed_hosts": ["192.0.2.1:443"]}'
make_bundle "$bundle" /bin/cerberus-probe connect tcp 203.0.113.9 443 || exit 1

# denied_once ID [GLOBAL OPTION...]: runs the bundle under the policy; the connect is denied, and the trail
# holds exactly that one denial (two sets enforcing the same container would write two).
denied_once() {
    id="$1"
    shift
    rm -f "/var/log/cerberus/$id.jsonl"
    bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
    out="$(cerberus "$@" run --bundle "$bundle" "$id" 2>&1)"
    cerberus delete --force "$id" >/dev/null 2>&1
    [ "$out" = "errno=1 (EPERM)" ] || { echo "container said: $out"; return 1; }
    events="$(jq -s 'map(select(.type == "denial")) | length' "/var/log/cerberus/$id.jsonl")"
    [ "$events" = 1 ] || { echo "trail: $(cat "/var/log/cerberus/$id.jsonl")"; return 1; }
    enforcement="$(jq -rs 'map(select(.type == "start"))[0].enforcement' "/var/log/cerberus/$id.jsonl")"
    [ -z "$WANT" ] || [ "$enforcement" = "$WANT" ] || { echo "trail names $enforcement, not $WANT"; return 1; }
}

# The control: without a policy the same connect is let through (no route in the container's netns).
bundle_edit "$bundle" 'del(.annotations["io.cerberus.policy"])'
vm_expect_errno "no policy: the connect is not denied" ENETUNREACH cerberus run --bundle "$bundle" backend-none
cerberus delete --force backend-none >/dev/null 2>&1
pins="$(pin_dir)" # where this build pins (cerberus check probes, and so loads, every set this kernel runs)
[ -n "$pins" ] || { vm_fail "pin dir" "cerberus check names none"; exit 0; }

# prog_types NAME: the kernel's types of the loaded programs of that name.
prog_types() {
    bpftool prog show -j | jq -r --arg n "$1" '[.[] | select(.name == $n) | .type] | sort | join(" ")'
}

case "$VM_BOOT" in
bpf-lsm)
    WANT=bpf-lsm; vm_check "auto: the BPF LSM enforces" denied_once backend-auto
    vm_check "auto: its programs are attached" test -e $pins/lsm_cerb_file_open
    WANT=fmod-ret; vm_check "fmod-ret asked for beside it enforces" denied_once backend-fmod --enforcement fmod-ret
    vm_expect_output "both sets attached, as lsm and tracing programs" "lsm tracing" prog_types cerb_file_open
    WANT=bpf-lsm; vm_check "auto after both: still one denial, by the BPF LSM" denied_once backend-auto-2
    WANT=fmod-ret; vm_check "fmod-ret after both: still one denial" denied_once backend-fmod-2 --enforcement fmod-ret
    rm -f $pins/fmod_ret $pins/fmod_ret_* # no fmod-ret container is left: the later cases run without them
    ;;
no-bpf-lsm)
    lsm="$(cat /sys/kernel/security/lsm)"
    case ",$lsm," in
    *,bpf,*) vm_fail "bpf is not an active lsm" "/sys/kernel/security/lsm reads '$lsm'" ;;
    *) vm_ok "bpf is not an active lsm" ;;
    esac
    vm_check "kernel btf is present" test -s /sys/kernel/btf/vmlinux
    case "$VM_KERNEL" in
    6.1)
        WANT=landlock
        vm_check "auto: Landlock enforces (auto does not take fmod_ret before 6.12)" denied_once backend-auto-landlock \
            --enforcement auto
        vm_check "the trail says why fmod-ret was passed over" \
            grep -q '"passed_over":"bpf-lsm: .*fmod-ret: not taken by auto on Linux' /var/log/cerberus/backend-auto-landlock.jsonl
        ;;
    *)
        WANT=fmod-ret
        vm_check "auto: the fmod_ret programs enforce" denied_once backend-auto-fmod --enforcement auto
        vm_check "the trail says why the BPF LSM was passed over" \
            grep -q '"passed_over":"bpf-lsm: \\"bpf\\" is not in the active LSM list' /var/log/cerberus/backend-auto-fmod.jsonl
        ;;
    esac
    WANT=fmod-ret; vm_check "asked for: the fmod_ret programs enforce" denied_once backend-auto
    vm_check "auto: they are attached" test -e $pins/fmod_ret_cerb_file_open
    vm_check_fails "auto: the BPF LSM programs are not" test -e $pins/lsm
    vm_expect_output "they are tracing programs" "tracing" prog_types cerb_file_open

    before="$(bpftool map dump pinned $pins/cerb_policies -j | jq length)"
    bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
    vm_expect_refused "bpf-lsm asked for fails closed" 'enforcement "bpf-lsm": "bpf" is not in the active LSM list' \
        cerberus --enforcement bpf-lsm run --bundle "$bundle" backend-lsm
    vm_check_fails "and leaves no state" test -e /run/cerberus/backend-lsm
    vm_check_fails "and no cgroup" sh -c 'find /sys/fs/cgroup -name backend-lsm | grep -q .'
    vm_expect_output "and no policy entry" "$before" sh -c "bpftool map dump pinned $pins/cerb_policies -j | jq length"
    vm_check_fails "and no BPF LSM programs" test -e $pins/lsm
    ;;
esac
rm -rf "$bundle"
exit 0
