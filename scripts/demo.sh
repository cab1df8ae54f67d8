#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: an agent container under a policy. On this host first, natively, under the backend `auto`
# picks here (the landlock backend where the BPF LSM is refused): each denied action beside an allowed one,
# and the denial trail. Then the worked story of examples/prompt-injection/, natively, with the dashboard
# (`cerberus dashboard`) on this host's loopback: its URL is printed and, on a terminal, the story waits
# for you to open it; then the story in audit mode where the backend can audit it. Last, the real-kernel
# lane, under the BPF LSM: the same kind of agent container as the first, and the story in both modes.
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(cd "${1:-build}" && pwd)
work=$(mktemp -d)
cerberus=("$build/cerberus" --root "$work/state" --audit-dir "$work/audit")
dashboard=""
cleanup() {
    "${cerberus[@]}" delete --force demo-host >/dev/null 2>&1 || true
    [[ -z "$dashboard" ]] || { kill "$dashboard" 2>/dev/null; wait "$dashboard" 2>/dev/null; } || true
    rm -rf "$work"
}
trap cleanup EXIT

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

echo "== the worked story: a prompt-injected agent (examples/prompt-injection/), natively"
port=7070
(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null &&
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${cerberus[@]}" dashboard --listen "127.0.0.1:$port" >"$work/dashboard.log" 2>&1 &
dashboard=$!
for _ in $(seq 100); do grep -q "cerberus dashboard: http" "$work/dashboard.log" && break; sleep 0.05; done
echo
echo "   dashboard: http://127.0.0.1:$port/"
echo
[[ ! -t 0 ]] || read -r -p "Open the dashboard, then press Enter to let the agent loose. "
# story.sh calls one command; this one carries the demo's state and trail directories.
printf '#!/bin/sh\nexec %q --root %q --audit-dir %q "$@"\n' "$build/cerberus" "$work/state" "$work/audit" \
    >"$work/cerberus" && chmod +x "$work/cerberus"
examples/prompt-injection/story.sh --cerberus "$work/cerberus" --id demo-story
backend=$("$build/cerberus" check | sed -n 's/^--enforcement auto picks: //p')
if [[ $backend == bpf-lsm ]]; then
    echo "== the same story in audit mode: what would have leaked"
    examples/prompt-injection/story.sh --cerberus "$work/cerberus" --id demo-story-audit --mode audit
else
    echo "== (the story in audit mode needs the BPF LSM: the $backend backend cannot audit file rules, and create"
    echo "   refuses such a policy rather than weaken it; examples/prompt-injection/README.md shows that run)"
fi
[[ ! -t 0 ]] || read -r -p "Press Enter to go on to the real-kernel lane (the dashboard stops). "
kill "$dashboard" && wait "$dashboard" 2>/dev/null || true
dashboard=""

echo "== the real-kernel lane: Debian's kernel with lsm=...,bpf under qemu (the BPF LSM backend): the agent, then the story in both modes"
flock /tmp/cerberus-vm.lock tests/vm/run.sh --build "$build" --cases tests/vm/demo \
    --add "$(command -v ip):/usr/local/sbin/ip" --add "$PWD/examples/prompt-injection:/vm/examples/prompt-injection"
