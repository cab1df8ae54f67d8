#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The dashboard's browser tier: Debian's chromium, headless, driven by
# playwright-core (tests/browser/*.mjs) against `cerberus dashboard` on this
# host, while a policed container here, enforced natively by the backend
# `auto` picks (landlock where the BPF LSM is refused), is denied a connect
# by a program whose file name is markup, then a file read: under landlock
# that one reaches the trail from the kernel audit log, which the tier turns
# on for its run (cerberus-audit-switch) and puts back as it found it.
#
# First tests/browser/feed_skipped.mjs: what the page says when its live feed
# falls behind (trails written by the test, no kernel policy needed). Then
# tests/browser/dashboard.mjs with the live denial. Then tests/browser/ask.mjs:
# a second policed container's lookup of a name its ask_hosts lists waits at
# the DNS gate (dnsmasq on 192.0.2.53 in the container's network namespace is
# its nameserver) until the test approves it on the page, after a forged
# cross-origin form post was refused.
#
# Usage: tests/browser/run.sh [BUILD_DIR] [SCREENSHOT_DIR]   (default build, build/browser)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd)
out=$(mkdir -p "${2:-$build/browser}" && cd "${2:-$build/browser}" && pwd)

[[ -x /usr/bin/chromium ]] || { echo "browser: /usr/bin/chromium is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
command -v node >/dev/null || { echo "browser: node is missing" >&2; exit 1; }
# playwright-core only, as the lockfile pins it: it drives the browser it is given and downloads none.
(cd tests/browser && { [[ -d node_modules/playwright-core ]] || npm ci --no-audit --no-fund >&2; })

work=$(mktemp -d)
id="browser-agent-$$"
cerberus=("$build/cerberus" --root "$work/state" --audit-dir "$work/audit")
dashboard=""
asker="browser-asker-$$"
dnsmasq=""
audit_switch="$build/cerberus-audit-switch"
audit_before=$("$audit_switch" get 2>/dev/null) || audit_before=""
cleanup() {
    [[ -z "$dashboard" ]] || { kill "$dashboard" 2>/dev/null; wait "$dashboard" 2>/dev/null; } || true
    [[ -z "$dnsmasq" ]] || { kill "$dnsmasq" 2>/dev/null; wait "$dnsmasq" 2>/dev/null; } || true
    "${cerberus[@]}" delete --force "$id" >/dev/null 2>&1 || true
    "${cerberus[@]}" delete --force "$asker" >/dev/null 2>&1 || true
    [[ -z "$audit_before" || "$("$audit_switch" get)" == "$audit_before" ]] || "$audit_switch" set "$audit_before"
    rm -rf "$work"
}
trap cleanup EXIT
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# start_dashboard LOG [options]: a dashboard on a free loopback port; sets $dashboard and $port.
start_dashboard() {
    local log=$1
    shift
    port=$(free_port)
    "$build/cerberus" dashboard --listen "127.0.0.1:$port" "$@" >"$log" 2>&1 &
    dashboard=$!
    for _ in $(seq 100); do grep -q "cerberus dashboard: http" "$log" && return 0; sleep 0.05; done
    echo "browser: the dashboard did not start: $(cat "$log")"
    return 1
}
stop_dashboard() {
    kill "$dashboard" && wait "$dashboard" 2>/dev/null || true
    dashboard=""
}

status=0
mkdir -p "$work/burst"
: >"$work/burst/burst.jsonl"
start_dashboard "$out/burst-dashboard.log" --audit-dir "$work/burst"
node tests/browser/feed_skipped.mjs --url "http://127.0.0.1:$port/" --trail "$work/burst/burst.jsonl" \
    >"$out/feed-skipped.log" 2>&1 || status=1
stop_dashboard
sed 's/^/browser (feed): /' "$out/feed-skipped.log"

# The agent: waits for /go, then its program (named as markup) connects where the policy allows nothing
# and stays a while (hold), so that the collector finds its /proc/<pid>/exe; then reads a file outside
# its paths. Landlock logs that read to kernel audit only while audit is on (2 = locked on, left so).
[[ -n "$audit_before" ]] || { echo "browser: kernel audit cannot be read here ($audit_switch get)"; exit 1; }
[[ "$audit_before" == 2 ]] || "$audit_switch" set 1
hostile='<img src=x onerror=window.__pwned=1>'
bundle="$work/bundle"
mkdir -p "$bundle/rootfs/bin"
cp /bin/busybox "$bundle/rootfs/bin/busybox"
ln -s busybox "$bundle/rootfs/bin/sh"
cp "$build/cerberus-probe" "$bundle/rootfs/bin/$hostile"
echo 'not for the agent' >"$bundle/rootfs/secret.txt"
(cd "$bundle" && "$build/cerberus" spec)
jq --arg agent 'until [ -e /go ]; do busybox sleep 0.05; done; "/bin/$1" hold 5 connect tcp 192.0.2.1 443; busybox cat /secret.txt; exec busybox sleep 60' \
    --arg hostile "$hostile" '.process.terminal = false | .process.args = ["/bin/sh", "-c", $agent, "agent", $hostile]
    | .annotations["io.cerberus.policy"] = "{\"allowed_hosts\": [\"198.51.100.7:443\"], \"allowed_paths\": [\"/tmp\"], \"read_only_paths\": [\"/bin\"]}"' \
    "$bundle/config.json" >"$work/config.json" && mv "$work/config.json" "$bundle/config.json"
token="browser-test-token-$$-0123456789"
start_dashboard "$out/dashboard.log" --audit-dir "$work/audit" --token "$token"
"${cerberus[@]}" create --bundle "$bundle" "$id" >"$work/agent.out" 2>&1 </dev/null
"${cerberus[@]}" start "$id"
node tests/browser/dashboard.mjs --url "http://127.0.0.1:$port/" --token "$token" --go "$bundle/rootfs/go" \
    --container "$id" --hostile "$hostile" --screenshot "$out/dashboard.png" >"$out/browser.log" 2>&1 || status=1
stop_dashboard
"${cerberus[@]}" delete --force "$id"
sed 's/^/browser: /' "$out/browser.log"
# The kernel's side of the same denial, beside what the page showed.
if grep -q 'errno=1 (EPERM)' "$work/agent.out"; then
    echo "browser (kernel): ok the agent's connect failed with EPERM"
else
    echo "browser (kernel): FAIL the agent's connect failed with EPERM: $(cat "$work/agent.out")"
    status=1
fi
if grep -qE "/secret\.txt'?: Permission denied" "$work/agent.out"; then
    echo "browser (kernel): ok the agent's read of /secret.txt failed with EACCES"
else
    echo "browser (kernel): FAIL the agent's read of /secret.txt failed with EACCES: $(cat "$work/agent.out")"
    status=1
fi

# The asker: waits for /go, then looks asked.example up through the DNS gate, which holds it for an operator.
bundle="$work/asker"
mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/etc"
cp /bin/busybox "$bundle/rootfs/bin/busybox"
ln -s busybox "$bundle/rootfs/bin/sh"
echo "nameserver 192.0.2.53" >"$bundle/rootfs/etc/resolv.conf"
(cd "$bundle" && "$build/cerberus" spec)
jq --arg agent 'until [ -e /go ]; do busybox sleep 0.05; done; busybox nslookup -type=a asked.example 127.53.0.1; echo lookup-done; exec busybox sleep 60' \
    '.process.terminal = false | .process.args = ["/bin/sh", "-c", $agent]
    | .annotations["io.cerberus.policy"] = "{\"allowed_hosts\": [], \"ask_hosts\": {\"names\": [\"asked.example:443\"], \"ask_timeout\": \"30s\"}}"' \
    "$bundle/config.json" >"$work/config.json" && mv "$work/config.json" "$bundle/config.json"
start_dashboard "$out/ask-dashboard.log" --audit-dir "$work/audit" --token "$token"
"${cerberus[@]}" create --bundle "$bundle" "$asker" >"$work/asker.out" 2>&1 </dev/null
asker_pid=$("${cerberus[@]}" state "$asker" | jq -r .pid)
nsenter --net="/proc/$asker_pid/ns/net" ip addr add 192.0.2.53/32 dev lo
nsenter --net="/proc/$asker_pid/ns/net" dnsmasq --keep-in-foreground --no-resolv --no-hosts --bind-interfaces \
    --listen-address=192.0.2.53 --user=root --pid-file="$work/dnsmasq.pid" --address=/asked.example/203.0.113.9 &
dnsmasq=$!
"${cerberus[@]}" start "$asker"
node tests/browser/ask.mjs --url "http://127.0.0.1:$port/" --token "$token" --go "$bundle/rootfs/go" \
    --container "$asker" --out "$work/asker.out" --name asked.example --address 203.0.113.9 \
    >"$out/ask.log" 2>&1 || status=1
stop_dashboard
"${cerberus[@]}" delete --force "$asker"
sed 's/^/browser (ask): /' "$out/ask.log"
exit $status
