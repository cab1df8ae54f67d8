#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# /init of the test VM (busybox ash, PID 1). Stage 1 runs from the initramfs and moves everything onto a
# tmpfs, because pivot_root(2) cannot leave the initramfs and container runtimes pivot_root. Stage 2 mounts
# what a cgroup-v2 host with BPF LSM has, runs the cases listed in /vm/run.$VM_BOOT.list (run-cases.sh;
# VM_BOOT, from the kernel command line, names the boot: bpf-lsm, no-bpf-lsm or landlock, see run.sh) and powers
# off. Verdict lines come from the cases (see /vm/lib.sh).
# With /vm/systemd-root (run.sh --systemd), stage 1 instead mounts the Debian root on /dev/vda, copies the
# lane's files into it, adds the unit that runs the cases and powers off, and hands over to systemd.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# Loads the modules run.sh put in the initramfs, dependencies first.
load_modules() {
    while read -r module; do
        insmod "$module" || echo "VMINFO insmod $module failed"
    done </vm/modules.list
}

if [ -f /vm/systemd-root ]; then
    mount -t proc proc /proc
    mount -t sysfs sysfs /sys
    mount -t devtmpfs devtmpfs /dev
    exec </dev/console >/dev/console 2>&1
    read -r uptime _ </proc/uptime
    echo "VMINFO boot_to_init $uptime"
    load_modules
    mkdir -p /newroot
    mount -t ext4 /dev/vda /newroot || { echo "VMTEST fail lane: cannot mount the root image /dev/vda"; poweroff -f; }
    rm -rf /newroot/vm /newroot/rootfs
    cp -a /vm /rootfs /newroot/
    cp -a /usr/local/. /newroot/usr/local/
    [ ! -d /etc/cerberus ] || cp -a /etc/cerberus /newroot/etc/
    for arg in $(cat /proc/cmdline); do
        case "$arg" in VM_CASE_TIMEOUT=* | VM_BOOT=* | VM_KERNEL=*) echo "export $arg" >>/newroot/vm/env ;; esac
    done
    unit=/newroot/etc/systemd/system/cerberus-vmtest.service
    cat >"$unit" <<'UNIT'
[Unit]
Description=the VM lane's cases
Wants=dbus.service
After=basic.target dbus.service
SuccessAction=poweroff-immediate
FailureAction=poweroff-immediate
[Service]
Type=oneshot
ExecStart=/vm/run-cases.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
UNIT
    mkdir -p /newroot/etc/systemd/system/multi-user.target.wants
    ln -sf ../cerberus-vmtest.service /newroot/etc/systemd/system/multi-user.target.wants/
    mount --move /proc /newroot/proc
    mount --move /sys /newroot/sys
    mount --move /dev /newroot/dev
    exec switch_root /newroot /lib/systemd/systemd
fi

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
echo "VMINFO boot $VM_BOOT, kernel ${VM_KERNEL:-6.1} $(uname -r)"
echo "VMINFO boot_to_init $VM_BOOT_UPTIME"

load_modules

# Like systemd on a real host: every controller is available to child cgroups.
sed 's/\([^ ]*\)/+\1/g' /sys/fs/cgroup/cgroup.controllers >/sys/fs/cgroup/cgroup.subtree_control

# The boots without bpf in lsm= run the cases under one backend each, asked for as a user would.
case "$VM_BOOT" in
no-bpf-lsm) forced=fmod-ret ;;
landlock) forced=landlock ;;
*) forced="" ;;
esac
if [ -n "$forced" ]; then
    mkdir -p /usr/local/sbin
    printf '#!/bin/sh\nexec /usr/local/bin/cerberus --enforcement %s "$@"\n' "$forced" >/usr/local/sbin/cerberus
    chmod +x /usr/local/sbin/cerberus
    # A backend this kernel refuses (fmod-ret before 6.12): run-cases.sh runs only the cases that check it.
    refused="$(/usr/local/bin/cerberus check 2>/dev/null | sed -n "s/^  $forced *unusable: //p")"
    [ -z "$refused" ] || export VM_BACKEND_REFUSED="$forced: the backend is refused on this kernel: $refused"
fi

/vm/run-cases.sh
poweroff -f
