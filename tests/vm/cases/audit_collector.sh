#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The audit collector's lifetime: a run of short-lived policed containers shares one collector, which stays
# 10 s after the last container goes and then exits; deleting a container that never produced an event does
# not wait for the collector (it may be stopped), and leaves no registry entry behind.
# vm-timeout: 180
. /vm/lib.sh

vm_has_cerberus && vm_has_probe || exit 0
bundle=/tmp/bundle-audit-collector
run_dir="$(cerberus check | sed -n 's/^audit run dir: *//p')"
registry="$run_dir/containers"
make_bundle "$bundle" /bin/true &&
    bundle_edit "$bundle" '.annotations["io.cerberus.policy"] = $p' --arg p '{"allowed_hosts": ["192.0.2.1:443"]}' ||
    exit 1

collector_pid() { cat "$run_dir/collector.lock" 2>/dev/null; }
# Alive, not a zombie: the exited collector's parent is init, which may not have reaped it yet.
collector_alive() {
    pid="$(collector_pid)" && [ -n "$pid" ] && [ -f "/proc/$pid/status" ] && ! grep -q '^State:.*Z' "/proc/$pid/status"
}

vm_check "a quiet policed container runs" cerberus run --bundle "$bundle" audit-collector-1
first="$(collector_pid)"
vm_expect_output "its registry entry is gone after delete" "" ls -A "$registry"
vm_check "the collector stays after the last container went" collector_alive
vm_check "a second policed container runs" cerberus run --bundle "$bundle" audit-collector-2
vm_expect_output "it shares the first one's collector" "$first" collector_pid

# A stopped collector cannot answer: a delete that asked it would wait for its 10 s timeout and warn.
cerberus create --bundle "$bundle" audit-collector-3 || vm_fail "create with the collector running" "exit $?"
kill -STOP "$first"
vm_run cerberus delete --force audit-collector-3
status=$VM_STATUS said="$(vm__said)"
kill -CONT "$first"
if [ "$status" = 0 ] && [ -z "$VM_STDERR" ]; then
    vm_ok "deleting a container with no events does not ask the collector"
else
    vm_fail "deleting a container with no events does not ask the collector" "$said"
fi
vm_expect_output "and drops its registry entry itself" "" ls -A "$registry"

# Idle for 10 s (checked once a second): the collector exits and lets go of its lock.
waited=0
while collector_alive && [ $waited -lt 30 ]; do
    sleep 1
    waited=$((waited + 1))
done
if collector_alive; then
    vm_fail "the idle collector exits" "pid $(collector_pid) still runs after ${waited}s"
elif [ $waited -lt 5 ]; then
    vm_fail "the idle collector exits" "it left after ${waited}s, before its 10 s linger"
else
    vm_ok "the idle collector exits (after ${waited}s)"
fi

rm -rf "$bundle"
exit 0
