#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: an agent container under a policy. On this host first, natively, under the backend `auto`
# picks here (the landlock backend where the BPF LSM is refused): each denied action beside an allowed one,
# and the denial trail. Then the same kind of container in the real-kernel lane, under the BPF LSM.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
cerberus=("$build/cerberus" --root "$work/state" --audit-dir "$work/audit")
trap '"${cerberus[@]}" delete --force demo-host >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

mkdir -p "$work/bundle/rootfs/bin" "$work/bundle/rootfs/workspace" "$work/bundle/rootfs/secrets"
cp /bin/busybox "$work/bundle/rootfs/bin/"
ln -s busybox "$work/bundle/rootfs/bin/sh"
cp "$build/cerberus-probe" "$work/bundle/rootfs/bin/probe"
echo "print('hello')" >"$work/bundle/rootfs/workspace/task.py"
echo "api-key" >"$work/bundle/rootfs/workspace/.env"
echo "db-password" >"$work/bundle/rootfs/secrets/db"
(cd "$work/bundle" && "$build/cerberus" spec)
policy='{"allowed_hosts": ["192.0.2.0/24:443"], "allowed_paths": ["/workspace", "/tmp", "/dev"],
         "read_only_paths": ["/bin", "/proc"], "denied_paths": ["/workspace/.env"],
         "allowed_bins": ["/bin/busybox", "/bin/probe"]}'
agent='for step in "read /workspace/task.py" "read /secrets/db" "read /workspace/.env" "write /workspace/out" \
        "connect tcp 192.0.2.10 443" "connect tcp 203.0.113.9 443" "unshare-user"; do
           printf "%-32s -> %s\n" "$step" "$(probe $step 2>&1)"
       done'
jq --arg p "$policy" --arg agent "$agent" '.process.terminal = false | .root.readonly = false
    | .process.args = ["sh", "-c", $agent] | .annotations["io.cerberus.policy"] = $p' \
    "$work/bundle/config.json" >"$work/config.json" && mv "$work/config.json" "$work/bundle/config.json"

echo "== this host: $("$build/cerberus" check | grep -E '^(LSMs|Landlock ABI|--enforcement)' | tr '\n' ';' | sed 's/;$//')"
echo "== an agent under a policy, natively (allowed actions print ok, denied ones their errno)"
if "${cerberus[@]}" run -b "$work/bundle" demo-host; then
    "${cerberus[@]}" delete --force demo-host >/dev/null 2>&1 || true
    echo "== its denial trail (cerberus events --denials)"
    "${cerberus[@]}" events --denials demo-host
else
    echo "(failed closed: this host can enforce no backend, and the agent did not run unprotected)"
fi

echo "== the real-kernel lane: Debian's kernel with lsm=...,bpf under qemu (the BPF LSM backend)"
flock /tmp/cerberus-vm.lock tests/vm/run.sh --build "$build" --cases tests/vm/demo
