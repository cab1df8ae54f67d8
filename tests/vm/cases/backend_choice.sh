#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Which programs enforce a policy (--enforcement): with bpf in lsm= auto takes the BPF LSM, and fmod-ret
# can be asked for beside it, each set enforcing only its own containers (one event per denial); without
# bpf in lsm= (as Ubuntu ships) auto takes the same programs as fmod_ret on the security_ functions from
# Linux 6.12 on, saying in the trail's first line why it passed the stronger ones over; before 6.12, and
# where the kernel preempts kernel code (7.x), the fmod-ret backend is refused, asked for or not
# (docs/policy.md: the kernel was seen skipping its programs there), and auto takes landlock. Asking for a
# backend the kernel refuses fails closed, saying why and leaving nothing behind. The other policy cases run
# in both boots, under whichever set auto takes (or skip, saying why, where the boot's backend is refused);
# a trampoline another tool filled is trampoline_full.sh.
# vm-timeout: 900
# vm-boots: bpf-lsm no-bpf-lsm
# vm-refused-backend: checked
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
    fmod_refused="$(cerberus check | sed -n 's/^  fmod-ret  unusable: //p')"
    if [ -n "$fmod_refused" ]; then # 6.1, 7.x: see the boot without bpf in lsm= below
        bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
        vm_expect_refused "fmod-ret asked for beside it fails closed here" \
            "enforcement \"fmod-ret\": ${fmod_refused%% (*}" \
            cerberus --enforcement fmod-ret run --bundle "$bundle" backend-fmod
        vm_check_fails "and no fmod_ret programs" test -e $pins/fmod_ret
        WANT=bpf-lsm; vm_check "auto after it: still one denial, by the BPF LSM" denied_once backend-auto-2
    else
        WANT=fmod-ret; vm_check "fmod-ret asked for beside it enforces" denied_once backend-fmod --enforcement fmod-ret
        vm_expect_output "both sets attached, as lsm and tracing programs" "lsm tracing" prog_types cerb_file_open
        WANT=bpf-lsm; vm_check "auto after both: still one denial, by the BPF LSM" denied_once backend-auto-2
        WANT=fmod-ret; vm_check "fmod-ret after both: still one denial" denied_once backend-fmod-2 --enforcement fmod-ret
        rm -f $pins/fmod_ret $pins/fmod_ret_* # no fmod-ret container is left: the later cases run without them
    fi
    ;;
no-bpf-lsm)
    lsm="$(cat /sys/kernel/security/lsm)"
    case ",$lsm," in
    *,bpf,*) vm_fail "bpf is not an active lsm" "/sys/kernel/security/lsm reads '$lsm'" ;;
    *) vm_ok "bpf is not an active lsm" ;;
    esac
    vm_check "kernel btf is present" test -s /sys/kernel/btf/vmlinux
    # fmod-ret is refused on kernels where its programs were seen skipped (docs/policy.md, "fmod-ret, settled"):
    # before 6.12, and where the kernel preempts kernel code (7.x's preempt=lazy).
    fmod_refused="$(cerberus check | sed -n 's/^  fmod-ret  unusable: //p')"
    if [ -n "$fmod_refused" ]; then
        vm_log "fmod-ret refused here: $fmod_refused"
        WANT=landlock
        vm_check "auto: Landlock enforces (fmod_ret is refused here)" denied_once backend-auto-landlock \
            --enforcement auto
        vm_check "the trail says why fmod-ret was passed over" \
            grep -qF "fmod-ret: ${fmod_refused%% (*}" /var/log/cerberus/backend-auto-landlock.jsonl
        refused_backends="bpf-lsm fmod-ret"
    else
        WANT=fmod-ret
        vm_check "auto: the fmod_ret programs enforce" denied_once backend-auto-fmod --enforcement auto
        vm_check "the trail says why the BPF LSM was passed over" \
            grep -q '"passed_over":"bpf-lsm: \\"bpf\\" is not in the active LSM list' /var/log/cerberus/backend-auto-fmod.jsonl
        WANT=fmod-ret; vm_check "asked for: the fmod_ret programs enforce" denied_once backend-auto
        vm_check "auto: they are attached" test -e $pins/fmod_ret_cerb_file_open
        vm_check_fails "auto: the BPF LSM programs are not" test -e $pins/lsm
        vm_expect_output "they are tracing programs" "tracing" prog_types cerb_file_open
        refused_backends="bpf-lsm"
    fi
    case "$VM_KERNEL" in # where the lane's evidence says it must be refused, and where it must not
    6.1 | 7.x) vm_check "fmod-ret is refused on $VM_KERNEL" test -n "$fmod_refused" ;;
    6.12) vm_check "fmod-ret runs on 6.12 (preempt=voluntary)" test -z "$fmod_refused" ;;
    esac

    # Each backend this kernel refuses, asked for: refused at create, saying why, and nothing left behind.
    before="$(bpftool map dump pinned $pins/cerb_policies -j | jq length)"
    bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
    for asked in $refused_backends; do
        case "$asked" in
        bpf-lsm) why='enforcement "bpf-lsm": "bpf" is not in the active LSM list' ;;
        fmod-ret) why="enforcement \"fmod-ret\": ${fmod_refused%% (*}" ;;
        esac
        vm_expect_refused "$asked asked for fails closed" "$why" \
            cerberus --enforcement "$asked" run --bundle "$bundle" "backend-$asked"
        vm_check_fails "$asked: and leaves no state" test -e "/run/cerberus/backend-$asked"
        vm_check_fails "$asked: and no cgroup" sh -c "find /sys/fs/cgroup -name backend-$asked | grep -q ."
        vm_expect_output "$asked: and no policy entry" "$before" \
            sh -c "bpftool map dump pinned $pins/cerb_policies -j | jq length"
    done
    vm_check_fails "and no BPF LSM programs" test -e $pins/lsm
    [ -z "$fmod_refused" ] || vm_check_fails "and no fmod_ret programs" test -e $pins/fmod_ret
    ;;
esac
rm -rf "$bundle"
exit 0
