#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The command broker's cost on this host, natively: N `git status` in a repository of the workspace,
# brokered from a policed container (shim, socket, decision, the tool's own mount namespace, the record),
# against the same N of the host's git run directly in the same repository by the same busybox loop.
# Prints the time per call of each and their ratio (issue 32's target: at most 1.5).
# usage: bench/broker.sh BUILD_DIR [--calls N] [--files N]
set -euo pipefail
export LC_ALL=C.UTF-8

build=$(cd "${1:?usage: broker.sh BUILD_DIR [--calls N] [--files N]}" && pwd)
shift
calls=100
files=200
while [ $# -gt 0 ]; do
    case "$1" in
    --calls) calls=$2; shift 2 ;;
    --files) files=$2; shift 2 ;;
    *) echo "broker.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "broker.sh: must run as root" >&2; exit 1; }
command -v git >/dev/null || { echo "broker.sh: needs git" >&2; exit 1; }

work=$(mktemp -d /tmp/cerbench-broker.XXXXXX)
cerberus="$build/cerberus --root $work/state --audit-dir $work/audit"
export CERBERUS_SHIM="$build/cerberus-shim"
id=cerbench-broker-$$
cleanup() {
    set +e
    $cerberus delete --force "$id" >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT

rootfs="$work/rootfs"
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/dev" "$rootfs/etc" "$rootfs/tmp" "$work/ws/r"
cp "$(command -v busybox)" "$rootfs/bin/busybox"
for applet in sh sleep seq; do ln -s busybox "$rootfs/bin/$applet"; done
for i in $(seq 1 "$files"); do echo "$i" >"$work/ws/r/f$i"; done
git -C "$work/ws/r" init -q
git -C "$work/ws/r" add .
git -C "$work/ws/r" -c user.email=b@b -c user.name=b commit -q -m files

bundle="$work/bundle"
mkdir -p "$bundle"
ln -s "$rootfs" "$bundle/rootfs"
(cd "$bundle" && $cerberus spec >/dev/null)
jq --arg ws "$work/ws" '
    .process.terminal = false | .process.args = ["sleep", "100000"] |
    .linux.cgroupsPath = "/cerbench/broker" |
    .mounts += [{"destination": "/work", "type": "bind", "source": $ws, "options": ["rbind", "rw"]}] |
    .annotations["io.cerberus.policy"] = "{\"commands\": {\"git\": {\"allow\": [\"status\"]}}}"' \
    "$bundle/config.json" >"$bundle/config.json.tmp"
mv "$bundle/config.json.tmp" "$bundle/config.json"
$cerberus run -d -b "$bundle" "$id" </dev/null >/dev/null

loop="for i in \$(seq 1 $calls); do git status >/dev/null || exit 1; done"
ns() { date +%s%N; }
# one of each first: caches warm, the broker started
busybox sh -c "cd $work/ws/r && git status >/dev/null"
$cerberus exec "$id" sh -c "cd /work/r && git status >/dev/null"
# Builds of one layout and wire share a broker (it lingers 10 s once idle): time this build's, or none.
serving=
for lock in /run/cerberus-broker/*/broker.lock; do
    pid=$(cat "$lock" 2>/dev/null) || continue
    if cmp -s "/proc/$pid/exe" "$build/cerberus"; then serving=$pid; fi
done
[ -n "$serving" ] || { echo "broker.sh: the running broker is another build's: run again once it exited" >&2; exit 1; }

# three rounds, each direct then brokered, so that load from elsewhere weighs on both; the median round
direct_runs=() brokered_runs=()
for round in 1 2 3; do
    start=$(ns)
    busybox sh -c "cd $work/ws/r && $loop"
    direct_runs+=($(( $(ns) - start )))
    start=$(ns)
    $cerberus exec "$id" sh -c "cd /work/r && $loop"
    brokered_runs+=($(( $(ns) - start )))
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
direct=$(median "${direct_runs[@]}")
brokered=$(median "${brokered_runs[@]}")

awk -v d="$direct" -v b="$brokered" -v n="$calls" -v f="$files" 'BEGIN {
    printf "git status, %d calls, %d files (median of 3 rounds): direct %.2f ms a call, brokered %.2f ms a call, ratio %.2f\n",
        n, f, d / n / 1e6, b / n / 1e6, b / d }'
