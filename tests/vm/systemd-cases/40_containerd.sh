#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# containerd on a stock systemd host with SystemdCgroup = true, as Kubernetes hosts configure it (kubeadm's
# cgroupDriver systemd): `containerd config default` with runc's SystemdCgroup set, and the shipped CRI
# snippet appended as docs/engines/containerd.md says. ctr runs containers through cerberus with
# --runc-systemd-cgroup (the runc shim then calls cerberus --systemd-cgroup; ctr allows it only with
# io.containerd.runc.v2 and --runc-binary, the CRI handler sets it from the config): one runs, one with a
# memory limit is in a scope with that MemoryMax and is OOM-killed past it, the policy denies a connect
# under the BPF LSM, and a bad policy's error reaches ctr's user.
# vm-timeout: 400
. /vm/lib.sh
. /vm/engines-lib.sh

vm_has_cerberus || exit 0
work=/tmp/containerd-case
mkdir -p "$work" /etc/containerd
image=localhost/busybox:latest
by_binary="--runtime io.containerd.runc.v2 --runc-binary /usr/local/bin/cerberus --runc-systemd-cgroup"
# ctr's --runc-systemd-cgroup needs a slice:prefix:name cgroup, as the CRI plugin makes one.
cg() { echo "--cgroup system.slice:ctr:$1"; }

containerd config default | sed 's/SystemdCgroup = false/SystemdCgroup = true/' >/etc/containerd/config.toml
cat /usr/local/share/cerberus/containerd/config.toml >>/etc/containerd/config.toml
vm_check "containerd starts with the CRI snippet" systemctl restart containerd
vm_expect_contains "the cerberus CRI handler uses the systemd cgroup driver" 'SystemdCgroup = true' \
    sh -c "containerd config dump | grep -A8 'runtimes.cerberus.options'"
vm_expect_contains "the CRI plugin is up with it" cri sh -c "ctr plugins ls | grep -E 'grpc\.v1 +cri .* ok'"

# ctr imports only image archives: made with Podman, as docs/engines/images.md says.
import_image() {
    make_rootfs && podman import -q --change 'CMD ["sh"]' "$work/rootfs.tar" "$image" >/dev/null &&
        podman save -q --format docker-archive -o "$work/busybox.tar" "$image" && podman rmi -f "$image" >/dev/null &&
        ctr image import "$work/busybox.tar" >/dev/null
}
vm_check "the busybox image is imported (docs/engines/images.md)" import_image
vm_expect_output "run prints the container's output" hello-from-ctr \
    ctr run $by_binary $(cg t1) --rm "$image" t1 echo hello-from-ctr

vm_check "run -d with a memory limit" ctr run $by_binary $(cg t3) -d --memory-limit 33554432 "$image" t3 sleep 300
pid="$(ctr task ls | awk '$1 == "t3" { print $2 }')"
scope=ctr-t3.scope
vm_expect_output "the container's init is in the scope" "0::/system.slice/$scope" cat "/proc/$pid/cgroup"
vm_expect_output "the scope is active while it runs" active systemctl is-active "$scope"
vm_expect_output "the memory limit is the scope's MemoryMax" 33554432 systemctl show -P MemoryMax "$scope"
remove_task() { ctr task kill -s KILL "$1" && sleep 1 && ctr task rm "$1" && ctr container rm "$1"; }
vm_check "task kill, rm" remove_task t3
vm_check "rm leaves no scope" vm_unit_gone "$scope"
vm_check_fails "rm leaves no cgroup" test -e "/sys/fs/cgroup/system.slice/$scope"

vm_expect_output "without a memory limit the hog survives" survived \
    ctr run $by_binary $(cg t4) --rm "$image" t4 awk "$vm_memory_hog"
vm_run ctr run $by_binary $(cg t5) --rm --memory-limit 16777216 "$image" t5 awk "$vm_memory_hog"
if [ "$VM_STATUS" -eq 137 ]; then vm_ok "a 16 MiB limit OOM-kills the hog"
else vm_fail "a 16 MiB limit OOM-kills the hog" "expected exit 137; $(vm__said)"; fi

# The script always ends with "policy-container-ran": exit 0 means the container ran.
vm_expect_contains "the policy denies a connect, the user sees EPERM" "Operation not permitted" \
    ctr run $by_binary $(cg p1) --rm --annotation "io.cerberus.policy=$denying_policy" "$image" p1 \
    sh -c "$policy_container_script"
vm_expect_contains "without the policy the connect is not denied (no route)" "Network is unreachable" \
    ctr run $by_binary $(cg p2) --rm "$image" p2 sh -c "$policy_container_script"
vm_expect_failure "a bad policy's error reaches the user" "$bad_policy_error" \
    ctr run $by_binary $(cg p3) --rm --annotation "io.cerberus.policy=$bad_policy" "$image" p3 echo never
vm_check "no ctr scope is left" sh -c '! systemctl list-units --all --no-legend "ctr-*.scope" | grep -q .'

for id in $(ctr container ls -q); do ctr task kill -s KILL "$id"; ctr task rm -f "$id"; ctr container rm "$id"; done \
    >/dev/null 2>&1
systemctl stop containerd >/dev/null 2>&1
rm -rf "$work"
exit 0
