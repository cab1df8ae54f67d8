#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The systemd boot is the host the driver is for: systemd is PID 1 on pure cgroup v2 with the BPF LSM, the
# engines and peer runtimes are installed, and this case runs in a scope of its own.
. /vm/lib.sh

vm_expect_output "systemd is PID 1" systemd cat /proc/1/comm
vm_expect_output "cgroup2 is the only hierarchy" cgroup2fs stat -f -c %T /sys/fs/cgroup
vm_expect_contains "the BPF LSM is active" bpf cat /sys/kernel/security/lsm
vm_expect_output "the case runs in its own scope" "0::/system.slice/vmtest-$VM_CASE.scope" cat /proc/self/cgroup
for tool in podman docker dockerd containerd ctr runc crun cerberus; do
    vm_check "$tool is installed" command -v "$tool"
done
exit 0
