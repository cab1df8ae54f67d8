#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Issue 16's churn, on every kernel of the lane (docs/policy.md, "fmod-ret, settled"): on Debian's 6.1, after
# minutes of containers and BPF objects coming and going beside the fmod_ret programs, the kernel skipped
# those programs on a CPU (their per-CPU run_cnt, run_time_ns and recursion_misses held pointer values, so
# the trampoline's recursion check refused them) and denials were let through. Named to run after the
# policy cases (make test-kernels runs them all in this boot first): rounds of a policed container whose
# mkdir outside allowed_paths must be denied, each beside another tool's fmod_ret programs attached to
# another security_ function and freed again, and a `cerberus check`; then every fmod_ret program's
# statistics. Without kernel.bpf_stats_enabled nothing legitimate writes run_cnt or run_time_ns, and
# recursion_misses grows only when the trampoline skipped the program. Without a policy the same mkdir
# works (the control).
# vm-timeout: 900
# vm-boots: no-bpf-lsm
. /vm/lib.sh

vm_has_cerberus && vm_has_probe && fmod_ret_case "churn" || exit 0
rounds="${VM_CHURN_ROUNDS:-30}"
bundle=/tmp/bundle-fmod-churn
policy='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/usr", "/sbin", "/etc", "/proc"]}'

# churn_run N POLICY: one container that tries mkdir /data/newN under POLICY ("" none); prints what it said.
churn_run() {
    policy_or_plain_bundle "$bundle" "$2" /bin/sh -c "mkdir /data/new$1 2>&1 && echo made" || return 99
    mkdir -p "$bundle/rootfs/workspace" "$bundle/rootfs/data"
    vm_run_bundle "$bundle" 2>&1 | tr '\n' ' '
}

# Another tool's programs: 8 fmod_ret programs on security_path_chown, attached, then freed.
other_tool() {
    mkdir -p /sys/fs/bpf/churn
    cerberus-fill-trampoline security_path_chown /sys/fs/bpf/churn 8 >/dev/null 2>&1
    rm -f /sys/fs/bpf/churn/*
}

control_made=0
i=0
while [ $i -lt 3 ]; do
    case "$(churn_run "c$i" "")" in *made*) control_made=$((control_made + 1)) ;; esac
    i=$((i + 1))
done
[ $control_made = 3 ] && vm_ok "control: mkdir outside works without a policy" ||
    vm_fail "control: mkdir outside works without a policy" "$control_made of 3"

escaped=0 denied=0 other=""
i=0
while [ $i -lt "$rounds" ]; do
    said="$(churn_run "$i" "$policy")"
    case "$said" in
    *made*) escaped=$((escaped + 1)) ;;
    *denied* | *EACCES* | *ermission*) denied=$((denied + 1)) ;;
    *) other="$other [$i: $said]" ;;
    esac
    other_tool
    cerberus check >/dev/null 2>&1
    i=$((i + 1))
done
vm_log "fmod_ret churn on $(uname -r): $rounds rounds, $denied denied, $escaped let through${other:+, other:$other}"
if [ $denied = "$rounds" ]; then
    vm_ok "every policed mkdir outside allowed_paths denied through $rounds rounds of churn"
else
    vm_fail "every policed mkdir outside allowed_paths denied through $rounds rounds of churn" \
        "$escaped let through, $denied denied${other:+, other:$other}"
fi

# The fmod_ret programs' statistics: all zero when the trampolines ran them (stats are off).
stats="$(bpftool prog show -j | jq -r '[.[] | select(.type == "tracing" and (.name | startswith("cerb_")))
    | select((.run_cnt // 0) != 0 or (.run_time_ns // 0) != 0 or (.recursion_misses // 0) != 0)
    | "\(.name) run_cnt=\(.run_cnt // 0) recursion_misses=\(.recursion_misses // 0)"] | join("; ")')"
programs="$(bpftool prog show -j | jq '[.[] | select(.type == "tracing" and (.name | startswith("cerb_")))] | length')"
vm_log "fmod_ret programs loaded: $programs; with statistics: ${stats:-none}"
if [ "$programs" -gt 0 ] && [ -z "$stats" ]; then
    vm_ok "no fmod_ret program skipped or its per-CPU state overwritten"
else
    vm_fail "no fmod_ret program skipped or its per-CPU state overwritten" "$programs programs; ${stats:-none}"
fi
rm -rf "$bundle" /sys/fs/bpf/churn
exit 0
