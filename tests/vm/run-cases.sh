#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the cases listed in /vm/run.$VM_BOOT.list (VM_BOOT and VM_KERNEL, from the kernel command line, name
# the boot and the kernel, see run.sh), each with its time limit, then prints `VMTEST done`. Called by
# /init on the busybox boot and by the cerberus-vmtest unit on the systemd boot (init.sh installs it).
# Verdict lines come from the cases (see /vm/lib.sh); this adds a `fail` line for a case that timed out or
# exited non-zero without one, and a `VMINFO case NAME SECONDS` line per case.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export VM_RESULTS=/run/vm-case-results
[ -f /vm/env ] && . /vm/env
if [ -d /run/systemd/system ]; then
    read -r uptime _ </proc/uptime
    echo "VMINFO systemd_ready $uptime"
fi

while read -r script; do
    case_name="$(basename "$script" .sh | sed 's/^[0-9]*_//')"
    # The default kernel's first boot's verdicts keep the case's name; others say where they come from.
    tag=""
    [ "${VM_KERNEL:-6.1}" = 6.1 ] || tag="$VM_KERNEL"
    [ "$VM_BOOT" = bpf-lsm ] || tag="${tag:+$tag }$VM_BOOT"
    name="$case_name${tag:+ [$tag]}"
    # The boot's backend refused by this kernel (init.sh asked): only the cases that check that refusal run,
    # and each other one says why it did not (docs/policy.md's coverage table shows it).
    if [ -n "$VM_BACKEND_REFUSED" ] && ! grep -q '^# vm-refused-backend: checked' "$script"; then
        echo "VMTEST skip $name: backend: cannot hold on $VM_BACKEND_REFUSED"
        continue
    fi
    limit="$(sed -n 's/^# vm-timeout: *\([0-9][0-9]*\).*/\1/p' "$script" | head -n1)"
    limit="${limit:-${VM_CASE_TIMEOUT:-120}}"
    : >"$VM_RESULTS"
    read -r started _ </proc/uptime
    if [ -d /run/systemd/system ]; then
        # In a scope of its own: what the case leaves running is stopped with it, and nothing else is.
        VM_CASE="$name" systemd-run --quiet --scope --unit="vmtest-$case_name" --collect \
            timeout "$limit" sh "$script" </dev/null
        status=$?
        systemctl stop "vmtest-$case_name.scope" 2>/dev/null
    else
        VM_CASE="$name" timeout "$limit" sh "$script" </dev/null
        status=$?
        kill -9 -1 2>/dev/null # whatever the case left running (PID 1 is spared), so cases stay independent
    fi
    read -r ended _ </proc/uptime
    echo "VMINFO case $name $(awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f", b - a }')"
    if [ "$status" -eq 143 ] || [ "$status" -eq 137 ] || [ "$status" -eq 124 ]; then
        echo "VMTEST fail $name: timeout: the case ran longer than ${limit}s"
    elif [ "$status" -ne 0 ] && ! grep -q '^VMTEST fail' "$VM_RESULTS"; then
        echo "VMTEST fail $name: exit: the case script exited with status $status"
    fi
done <"/vm/run.$VM_BOOT.list"

echo "VMTEST done"
sync
