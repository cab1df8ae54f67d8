#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: an agent container under a policy. On this host first: with
# the BPF LSM it runs here; without it cerberus must fail closed. Then the
# same container in the real-kernel lane, where the BPF LSM is on.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/bundle/rootfs/bin"
cp /bin/busybox "$work/bundle/rootfs/bin/"
ln -s busybox "$work/bundle/rootfs/bin/sh"
(cd "$work/bundle" && "$build/cerberus" spec)
jq '.process.terminal = false | .process.args = ["sh", "-c", "echo agent running"]
    | .annotations["io.cerberus.policy"] = "{\"allowed_hosts\": [\"192.0.2.0/24:443\"]}"' \
    "$work/bundle/config.json" > "$work/config.json" && mv "$work/config.json" "$work/bundle/config.json"

echo "== this host: cerberus run with a policy"
if "$build/cerberus" --root "$work/state" run -b "$work/bundle" demo-host; then
    echo "this kernel enforces the policy"
else
    echo "(failed closed: the agent did not run unprotected)"
fi

echo "== the real-kernel lane: Debian's kernel with lsm=...,bpf under qemu"
tests/vm/run.sh --build "$build" --cases tests/vm/demo
