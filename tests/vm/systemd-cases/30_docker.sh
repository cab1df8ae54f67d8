#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Docker on a stock systemd host with cgroup v2, set up as docs/engines/docker.md says: the shipped
# daemon.json runtimes, and Docker's default cgroup driver (systemd), which hands cerberus
# `--systemd-cgroup` and system.slice:docker:ID. A container runs, one with --memory is in a scope with that
# MemoryMax and is OOM-killed past it, the default policy of runtime cerberus-agent denies a connect under
# the BPF LSM, and a bad policy's error reaches Docker's user. (The VM has no iptables modules: Docker's networking is off,
# which is no cgroup setting.)
# vm-timeout: 400
. /vm/lib.sh
. /vm/engines-lib.sh

vm_has_cerberus || exit 0
work=/tmp/docker-case
mkdir -p "$work" /etc/docker
printf '%s\n' "$bad_policy" >"$work/bad-policy.json"
jq --arg bad "$work/bad-policy.json" '. + {"iptables": false, "ip-masq": false, "bridge": "none"}
    | .runtimes["cerberus-badpolicy"] = {"path": "/usr/local/bin/cerberus", "runtimeArgs": ["--default-policy", $bad]}' \
    /usr/local/share/cerberus/docker/daemon.json >/etc/docker/daemon.json
image=busybox:local
run_opts="--rm --network none"

vm_check "dockerd starts with the shipped runtimes" systemctl start docker
vm_expect_contains "the daemon.json runtimes are known" cerberus-agent docker info --format '{{json .Runtimes}}'
vm_expect_output "Docker's cgroup driver is systemd on cgroup v2, its default" "systemd 2" \
    docker info --format '{{.CgroupDriver}} {{.CgroupVersion}}'
import_image() { make_rootfs && docker import --change 'CMD ["sh"]' "$work/rootfs.tar" "$image"; }
vm_check "the busybox image is imported (docs/engines/images.md)" import_image
vm_expect_output "run prints the container's output" hello-from-docker \
    docker run $run_opts --runtime cerberus "$image" echo hello-from-docker

vm_check "run -d with --memory" docker run -d --name agent --network none --runtime cerberus --memory 32m \
    "$image" sleep 300
id="$(docker inspect --format '{{.Id}}' agent)"
pid="$(docker inspect --format '{{.State.Pid}}' agent)"
scope="docker-$id.scope"
vm_expect_output "the container's init is in Docker's scope" "0::/system.slice/$scope" cat "/proc/$pid/cgroup"
vm_expect_output "the scope is active while it runs" active systemctl is-active "$scope"
vm_expect_output "--memory is the scope's MemoryMax" 33554432 systemctl show -P MemoryMax "$scope"
vm_check "rm -f" docker rm -f agent
vm_check "rm leaves no scope" vm_unit_gone "$scope"
vm_check_fails "rm leaves no cgroup" test -e "/sys/fs/cgroup/system.slice/$scope"

vm_expect_output "without --memory the hog survives" survived \
    docker run $run_opts --runtime cerberus "$image" awk "$vm_memory_hog"
vm_run docker run $run_opts --runtime cerberus --memory 16m "$image" awk "$vm_memory_hog"
if [ "$VM_STATUS" -eq 137 ]; then vm_ok "--memory 16m OOM-kills the hog"
else vm_fail "--memory 16m OOM-kills the hog" "expected exit 137; $(vm__said)"; fi

# The script always ends with "policy-container-ran": exit 0 means the container ran.
vm_expect_contains "runtime cerberus-agent's policy (agent.json) denies a connect, the user sees EPERM" \
    "Operation not permitted" docker run $run_opts --runtime cerberus-agent "$image" sh -c "$policy_container_script"
vm_expect_contains "without a policy the connect is not denied (no route)" "Network is unreachable" \
    docker run $run_opts --runtime cerberus "$image" sh -c "$policy_container_script"
vm_expect_failure "a bad policy's error reaches the user" "$bad_policy_error" \
    docker run $run_opts --runtime cerberus-badpolicy "$image" echo never
vm_check "no docker scope is left" sh -c '! systemctl list-units --all --no-legend "docker-*.scope" | grep -q .'

docker rm -f $(docker ps -aq) >/dev/null 2>&1
systemctl stop docker docker.socket containerd >/dev/null 2>&1
rm -rf "$work"
exit 0
