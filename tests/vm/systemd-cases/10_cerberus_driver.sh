#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `cerberus --systemd-cgroup` on a systemd host: the container's transient scope exists while it runs, its
# limits hold (memory OOM-kills, pids refuses a fork; the same without limits survives), update changes them
# in the unit and the files, delete leaves no unit and no cgroup, the agent policy keys on the scope's cgroup,
# and bad input or a failed create leaves nothing behind.
# vm-timeout: 300
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
sd() { cerberus --systemd-cgroup "$@"; }
# create leaves the init holding its stdio: not the pipes vm_run reads to their end.
sd_create() { sd create "$@" </dev/null >/tmp/create.log 2>&1 || { cat /tmp/create.log; return 1; }; }
bundle=/tmp/bundle-systemd

# A detached container in the slice and scope engines ask for, with limits.
make_bundle "$bundle" sleep 300
bundle_edit "$bundle" '.linux.cgroupsPath = "system.slice:vmtest:sleeper"
    | .linux.resources.memory = {"limit": 67108864} | .linux.resources.pids = {"limit": 32}
    | .linux.resources.cpu = {"shares": 1024, "quota": 50000, "period": 100000}'
unit=vmtest-sleeper.scope
cg=/sys/fs/cgroup/system.slice/$unit
vm_check "create through systemd" sd_create --bundle "$bundle" sleeper
vm_expect_output "the scope is active while the container exists" active systemctl is-active "$unit"
vm_expect_contains "systemctl status shows the scope" "$unit" systemctl status --no-pager "$unit"
pid="$(cerberus state sleeper | jq -r .pid)"
vm_expect_output "the init is in the scope's cgroup" "0::/system.slice/$unit" cat "/proc/$pid/cgroup"
# show_unit UNIT PROPERTY...: "Name=value" lines, sorted.
show_unit() {
    local unit="$1"
    shift
    systemctl show "$@" "$unit" | sort
}
vm_expect_output "the unit delegates and has the limits" \
    "$(printf 'CPUQuotaPerSecUSec=500ms\nCPUWeight=100\nDelegate=yes\nMemoryMax=67108864\nTasksMax=32')" \
    show_unit "$unit" -p Delegate -p MemoryMax -p TasksMax -p CPUWeight -p CPUQuotaPerSecUSec
vm_expect_output "memory.max is the unit's" 67108864 cat "$cg/memory.max"
vm_expect_output "pids.max is the unit's" 32 cat "$cg/pids.max"
vm_expect_output "cpu.max is the unit's" "50000 100000" cat "$cg/cpu.max"
vm_expect_output "systemd filters devices too (DevicePolicy)" strict systemctl show -P DevicePolicy "$unit"
vm_check "start" sd start sleeper

vm_check "update through systemd" sd update --memory 33554432 --pids-limit 20 --cpu-quota 25000 sleeper
vm_expect_output "update changed the unit" "$(printf 'CPUQuotaPerSecUSec=250ms\nMemoryMax=33554432\nTasksMax=20')" \
    show_unit "$unit" -p MemoryMax -p TasksMax -p CPUQuotaPerSecUSec
vm_expect_output "update changed memory.max" 33554432 cat "$cg/memory.max"
vm_expect_output "update changed pids.max" 20 cat "$cg/pids.max"
vm_expect_output "update changed cpu.max" "25000 100000" cat "$cg/cpu.max"

vm_check "delete --force" sd delete --force sleeper
vm_check "delete leaves no unit" vm_unit_gone "$unit"
vm_check_fails "delete leaves no cgroup" test -e "$cg"
vm_check_fails "delete leaves no state" test -e /run/cerberus/sleeper

# Limits hold. The same programs without the limits are the controls.
export VM_CERBERUS_FLAGS=--systemd-cgroup
make_bundle "$bundle" awk "$vm_memory_hog"
vm_expect_output "without a memory limit the hog survives" survived vm_run_bundle "$bundle"
bundle_edit "$bundle" '.linux.resources.memory = {"limit": 16777216}'
vm_run vm_run_bundle "$bundle"
if [ "$VM_STATUS" -eq 137 ]; then vm_ok "memory.limit OOM-kills the hog"
else vm_fail "memory.limit OOM-kills the hog" "expected exit 137; $(vm__said)"; fi
vm_check "no scope is left once the OOM-killed container is deleted" sh -c '! systemctl list-units --all --no-legend "cerberus-vmtest-*" | grep -q .'

forks='i=0; while [ $i -lt 10 ]; do sleep 60 & i=$((i + 1)); echo started $i; done; kill $(jobs -p) 2>/dev/null'
make_bundle "$bundle" sh -c "$forks"
vm_run vm_run_bundle "$bundle"
started="$(echo "$VM_STDOUT" | grep -c started)"
if [ "$started" -eq 10 ]; then vm_ok "without a pids limit all ten forks work"
else vm_fail "without a pids limit all ten forks work" "started $started; $(vm__said)"; fi
bundle_edit "$bundle" '.linux.resources.pids = {"limit": 5}'
vm_run vm_run_bundle "$bundle"
started="$(echo "$VM_STDOUT" | grep -c started)"
if [ "$started" -eq 4 ]; then vm_ok "pids.limit 5 refuses the fifth fork"
else vm_fail "pids.limit 5 refuses the fifth fork" "started $started; $(vm__said)"; fi

# Devices: systemd's program and cerberus's both filter; an allowed node opens, another does not.
make_bundle "$bundle" sh -c 'mknod /tmp/null c 1 3 && echo x >/tmp/null && echo null-ok; mknod /tmp/mem c 1 1 && head -c1 /tmp/mem'
bundle_edit "$bundle" '.root.readonly = false | .process.capabilities[] += ["CAP_MKNOD"]'
vm_run vm_run_bundle "$bundle"
case "$VM_STDOUT:$VM_STDERR" in
*null-ok*"Operation not permitted"*) vm_ok "an allowed device opens, /dev/mem's numbers do not" ;;
*) vm_fail "an allowed device opens, /dev/mem's numbers do not" "$(vm__said)" ;;
esac

# The policy keys on the scope's cgroup: a denied connect fails, an allowed one is not denied.
p=/bin/cerberus-probe
policy_bundle "$bundle" '{"allowed_hosts": ["192.0.2.0/24:443"]}' $p connect tcp 203.0.113.9 443
vm_expect_errno "the policy denies a connect in the scope" EPERM vm_run_bundle "$bundle"
bundle_set_args "$bundle" $p connect tcp 192.0.2.9 443
vm_run vm_run_bundle "$bundle"
case "$VM_STDOUT" in
*EPERM* | "") vm_fail "the policy lets an allowed connect through" "$(vm__said)" ;;
*) vm_ok "the policy lets an allowed connect through" ;;
esac

# Bad input: the error names the field and the bundle, and nothing is left.
make_bundle "$bundle" true
bundle_edit "$bundle" '.linux.cgroupsPath = "/not/the/systemd/form"'
vm_expect_failure "a cgroupfs path is refused, naming the field and the bundle" \
    "$bundle/config.json: linux.cgroupsPath \"/not/the/systemd/form\"" sd run --bundle "$bundle" badpath
vm_check "the refused container left no state" sh -c '! test -e /run/cerberus/badpath'
vm_check "the refused container left no unit" sh -c '! systemctl list-units --all --no-legend "*badpath*" | grep -q .'
vm_check "the refused container left no cgroup" sh -c '[ -z "$(find /sys/fs/cgroup -name "*badpath*")" ]'

# Rootless is not supported: the error says so, and nothing is made.
vm_expect_failure "rootless is refused" "rootless containers (uid 65534) are not supported" \
    setpriv --reuid=65534 --regid=65534 --clear-groups cerberus --systemd-cgroup --root /tmp/rootless-state \
    run --bundle "$bundle" rootless
vm_check "the rootless attempt left no state" sh -c '! test -e /tmp/rootless-state/rootless'

# A create that fails after systemd made the scope (a prestart hook fails) stops the unit again.
bundle_edit "$bundle" '.linux.cgroupsPath = "system.slice:vmtest:hookfail" | .hooks.prestart = [{"path": "/bin/false"}]'
vm_check_fails "a failing prestart hook fails the create" sd_create --bundle "$bundle" hookfail
vm_check "the failed create left no unit" vm_unit_gone vmtest-hookfail.scope
vm_check_fails "the failed create left no cgroup" test -e /sys/fs/cgroup/system.slice/vmtest-hookfail.scope
vm_check_fails "the failed create left no state" test -e /run/cerberus/hookfail

rm -rf "$bundle"
exit 0
