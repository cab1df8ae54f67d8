#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the test VM (busybox ash, PID 1). Stage 1 runs from the initramfs and moves everything onto a
# tmpfs, because pivot_root(2) cannot leave the initramfs and container runtimes pivot_root. Stage 2 mounts
# what a cgroup-v2 host with BPF LSM has, runs the cases listed in /vm/run.list, prints `VMTEST done` and
# powers off. Verdict lines come from the cases (see /vm/lib.sh).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

if [ "$VM_STAGE" != 2 ]; then
    mount -t proc proc /proc
    read -r uptime _ </proc/uptime
    umount /proc
    mount -t tmpfs -o mode=0755 tmpfs /newroot
    for entry in /*; do
        case "$entry" in
        /newroot | /proc | /sys | /dev) mkdir -p "/newroot$entry" ;;
        *) cp -a "$entry" /newroot/ ;;
        esac
    done
    VM_STAGE=2 VM_BOOT_UPTIME="$uptime" exec switch_root /newroot /init
fi

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t securityfs securityfs /sys/kernel/security
mount -t bpf -o mode=0700 bpf /sys/fs/bpf
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs -o mode=1777 tmpfs /tmp
echo 1 >/proc/sys/kernel/printk # only emergencies on the console, so kernel text does not split verdicts
hostname cerberus-vm
ip link set lo up
echo "VMINFO boot_to_init $VM_BOOT_UPTIME"

while read -r module; do
    insmod "$module" || echo "VMINFO insmod $module failed"
done </vm/modules.list

# Like systemd on a real host: every controller is available to child cgroups.
sed 's/\([^ ]*\)/+\1/g' /sys/fs/cgroup/cgroup.controllers >/sys/fs/cgroup/cgroup.subtree_control

export VM_RESULTS=/run/vm-case-results
while read -r script; do
    name="$(basename "$script" .sh | sed 's/^[0-9]*_//')"
    limit="$(sed -n 's/^# vm-timeout: *\([0-9][0-9]*\).*/\1/p' "$script" | head -n1)"
    limit="${limit:-${VM_CASE_TIMEOUT:-120}}"
    : >"$VM_RESULTS"
    VM_CASE="$name" timeout "$limit" sh "$script" </dev/null
    status=$?
    if [ "$status" -eq 143 ] || [ "$status" -eq 137 ]; then
        echo "VMTEST fail $name: timeout: the case ran longer than ${limit}s"
    elif [ "$status" -ne 0 ] && ! grep -q '^VMTEST fail' "$VM_RESULTS"; then
        echo "VMTEST fail $name: exit: the case script exited with status $status"
    fi
    kill -9 -1 2>/dev/null # whatever the case left running (PID 1 is spared), so cases stay independent
done </vm/run.list

echo "VMTEST done"
sync
poweroff -f
