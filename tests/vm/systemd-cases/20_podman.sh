#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Podman on a stock systemd host, set up as docs/engines/podman.md says and nothing else: its default
# cgroup manager (systemd) hands cerberus `--systemd-cgroup` and machine.slice:libpod:ID. A container runs,
# one with --memory is in a scope with that MemoryMax and is OOM-killed past it, and the agent policy denies
# a connect under the BPF LSM; a bad policy's error reaches Podman's user.
# vm-timeout: 400
. /vm/lib.sh
. /vm/engines-lib.sh

vm_has_cerberus || exit 0
work=/tmp/podman-case
mkdir -p "$work" /etc/containers/containers.conf.d
cp /usr/local/share/cerberus/containers.conf.d/cerberus.conf /etc/containers/containers.conf.d/
image=localhost/busybox:latest
pm() { podman --runtime cerberus "$@"; }
run_opts="--rm --network none"

vm_expect_output "Podman's cgroup manager is systemd, its default" systemd podman info --format '{{.Host.CgroupManager}}'
import_image() { make_rootfs && podman import -q --change 'CMD ["sh"]' "$work/rootfs.tar" "$image"; }
vm_check "the busybox image is imported (docs/engines/images.md)" import_image
vm_expect_output "run prints the container's output" hello-from-podman pm run $run_opts "$image" echo hello-from-podman

vm_check "run -d with --memory" pm run -d --name agent --network none --memory 32m "$image" sleep 300
id="$(podman inspect --format '{{.Id}}' agent)"
pid="$(podman inspect --format '{{.State.Pid}}' agent)"
scope="libpod-$id.scope"
vm_expect_output "the container's init is in Podman's scope" "0::/machine.slice/$scope" cat "/proc/$pid/cgroup"
vm_expect_output "the scope is active while it runs" active systemctl is-active "$scope"
vm_expect_output "--memory is the scope's MemoryMax" 33554432 systemctl show -P MemoryMax "$scope"
vm_expect_output "and memory.max" 33554432 cat "/sys/fs/cgroup/machine.slice/$scope/memory.max"
vm_check "rm -f" podman rm -f agent
vm_check "rm leaves no scope" vm_unit_gone "$scope"
vm_check_fails "rm leaves no cgroup" test -e "/sys/fs/cgroup/machine.slice/$scope"

vm_expect_output "without --memory the hog survives" survived pm run $run_opts "$image" awk "$vm_memory_hog"
vm_run pm run $run_opts --memory 16m "$image" awk "$vm_memory_hog"
if [ "$VM_STATUS" -eq 137 ]; then vm_ok "--memory 16m OOM-kills the hog"
else vm_fail "--memory 16m OOM-kills the hog" "expected exit 137; $(vm__said)"; fi

# The script always ends with "policy-container-ran": exit 0 means the container ran.
vm_expect_contains "the policy denies a connect, the user sees EPERM" "Operation not permitted" \
    pm run $run_opts --annotation "$(csv_quoted "io.cerberus.policy=$denying_policy")" "$image" \
    sh -c "$policy_container_script"
vm_expect_contains "without the policy the connect is not denied (no route)" "Network is unreachable" \
    pm run $run_opts "$image" sh -c "$policy_container_script"
vm_expect_failure "a bad policy's error reaches the user" "$bad_policy_error" \
    pm run $run_opts --annotation "$(csv_quoted "io.cerberus.policy=$bad_policy")" "$image" echo never
vm_check "no libpod scope is left" sh -c '! systemctl list-units --all --no-legend "libpod-*" | grep -v conmon | grep -q .'

podman rm -af >/dev/null 2>&1
podman rmi -af >/dev/null 2>&1
rm -rf "$work"
exit 0
