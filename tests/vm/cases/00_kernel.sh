#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The VM kernel offers what the lane exists for: BPF LSM active, BTF, a pure cgroup v2 hierarchy with the
# controllers a runtime limits, and the modules containers use.
. /vm/lib.sh

lsm="$(cat /sys/kernel/security/lsm)"
case ",$lsm," in
*,bpf,*) vm_ok "bpf is an active lsm" ;;
*) vm_fail "bpf is an active lsm" "/sys/kernel/security/lsm reads '$lsm'" ;;
esac

vm_check "kernel btf is present" test -s /sys/kernel/btf/vmlinux
vm_check "/sys/fs/cgroup is cgroup2" grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts
vm_check_fails "no cgroup v1 hierarchy is mounted" grep -q ' cgroup ' /proc/mounts
vm_check "bpffs is mounted" grep -q ' /sys/fs/bpf bpf ' /proc/mounts

controllers="$(cat /sys/fs/cgroup/cgroup.controllers)"
for controller in cpu memory pids io cpuset; do
    case " $controllers " in
    *" $controller "*) vm_ok "cgroup controller $controller" ;;
    *) vm_fail "cgroup controller $controller" "cgroup.controllers reads '$controllers'" ;;
    esac
done

vm_check "overlay filesystem is available" grep -qw overlay /proc/filesystems
vm_check "a veth pair can be made" ip link add vmtest0 type veth peer name vmtest1
ip link del vmtest0 2>/dev/null
exit 0
