#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Pure cgroup v2 limits hold in the VM kernel: a cgroup made by hand with pids.max=5 refuses the sixth task,
# and one with memory.max=16M OOM-kills a process that grows past it while the same process survives
# without the limit. (To be redone through `cerberus run` once the runtime sets these limits.)
. /vm/lib.sh

check_pids_max() {
    local cg started
    cg="$(vm_cgroup_new pids_limit)" || { vm_fail "pids cgroup is made" "mkdir under /sys/fs/cgroup/vmtest failed"; return; }
    echo 5 >"$cg/pids.max"
    vm_expect_output "pids.max reads back 5" 5 cat "$cg/pids.max"

    # A shell joins the cgroup and starts sleepers until fork fails; it counts itself, so 4 can start.
    vm_run sh -c 'echo $$ >"$1/cgroup.procs" || exit 3
        i=0
        while [ $i -lt 10 ]; do sleep 60 >/dev/null 2>&1 & i=$((i + 1)); echo "started $i"; done' _ "$cg"
    started="$(echo "$VM_STDOUT" | grep -c started)"
    if [ "$VM_STATUS" -ne 0 ] && [ "$started" -eq 4 ]; then
        vm_ok "the sixth task cannot fork"
    else
        vm_fail "the sixth task cannot fork" "started $started sleepers; $(vm__said)"
    fi
    vm_expect_output "pids.current stays at the 4 sleepers" 4 cat "$cg/pids.current"
    vm_expect_output "pids.events counts the refusal" 1 vm_cgroup_stat "$cg/pids.events" max
    vm_check "the pids cgroup is killed and removed" vm_cgroup_remove "$cg"
}

# Grows a string by doubling to 64 MiB (about three times that at the peak) inside the given cgroup.
memory_hog() {
    sh -c 'echo $$ >"$1/cgroup.procs" || exit 3
        exec awk "BEGIN { s = \"x\"; while (length(s) < 64 * 1024 * 1024) s = s s; print \"survived\" }"' _ "$1"
}

check_memory_max() {
    local cg free kills
    cg="$(vm_cgroup_new memory_limit)" || { vm_fail "memory cgroup is made" "mkdir under /sys/fs/cgroup/vmtest failed"; return; }
    echo 16M >"$cg/memory.max"
    vm_expect_output "memory.max reads back 16M" 16777216 cat "$cg/memory.max"
    vm_run memory_hog "$cg"
    if [ "$VM_STATUS" -eq 137 ]; then
        vm_ok "a process past memory.max is oom-killed"
    else
        vm_fail "a process past memory.max is oom-killed" "expected exit 137 (SIGKILL); $(vm__said)"
    fi
    kills="$(vm_cgroup_stat "$cg/memory.events" oom_kill)"
    if [ "${kills:-0}" -ge 1 ]; then vm_ok "memory.events counts the oom kill"
    else vm_fail "memory.events counts the oom kill" "$(cat "$cg/memory.events")"; fi
    vm_cgroup_remove "$cg"

    free="$(vm_cgroup_new memory_free)" || { vm_fail "unlimited cgroup is made" "mkdir failed"; return; }
    vm_expect_output "the same process survives without memory.max" survived memory_hog "$free"
    vm_cgroup_remove "$free"
}

check_pids_max
check_memory_max
exit 0
