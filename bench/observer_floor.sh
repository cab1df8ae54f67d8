#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a call observer on the system call tracepoints costs on this host before it does any work (issue 31's
# target: the landlock backend's observer within 1.05x on the open loop): the open loop (`cerberus-probe
# loop-open`, open + close, CPU time per pair) with nothing attached, and with a program that returns at once
# attached to
#   - every call's return (`tp_btf/sys_exit`, where the call observer is attached);
#   - the return of a call the loop never makes (`syscalls/sys_exit_getppid`): the system call work flag every
#     task then carries, alone;
#   - the return of the loop's own `openat` (`syscalls/sys_exit_openat`): an observer of the path calls only;
# and with the call observer's own program (pinned by this build's runtime; a policed landlock create pins it),
# whose work on a call that succeeds is a comparison or two.
# The variants take turns, the order rotated every round; the table gives medians and fastest runs, and the
# ratio of each median to the median with nothing attached.
# usage: bench/observer_floor.sh BUILD_DIR [--rounds N] [--opens N]
set -euo pipefail
export LC_ALL=C.UTF-8

build=$(cd "${1:?usage: observer_floor.sh BUILD_DIR [--rounds N] [--opens N]}" && pwd)
shift
rounds=15
opens=100000
while [ $# -gt 0 ]; do
    case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --opens) opens=$2; shift 2 ;;
    *) echo "observer_floor: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "observer_floor: must run as root" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
# The tracepoints' ids are read from tracefs, mounted here in a mount namespace of the script's own if the host
# has none mounted.
if [ -z "${OBSERVER_FLOOR_NS:-}" ]; then
    OBSERVER_FLOOR_NS=1 exec unshare -m --propagation private "$0" "$build" --rounds "$rounds" --opens "$opens"
fi
[ -d /sys/kernel/tracing/events/syscalls ] || mount -t tracefs tracefs /sys/kernel/tracing

work=$(mktemp -d /tmp/cerbench-floor.XXXXXX)
holder=""
cleanup() {
    if [ -n "$holder" ]; then
        kill "$holder" 2>/dev/null || true
        wait "$holder" 2>/dev/null || true # killed: not a failure of the cleanup
    fi
    rm -rf "$work"
}
trap cleanup EXIT
clang -target bpf -O2 -g -I"$here/../bpf" -c "$here/../bpf/bench/empty_exits.bpf.c" -o "$work/empty_exits.bpf.o"
gcc -O2 -o "$work/attach" "$here/observer_floor/attach.c" -lbpf
touch "$work/file"

loop() { # CPU ns per open + close pair
    "$build/cerberus-probe" loop-open "$opens" "$work/file" | sed -n 's/.*cpu_per_op_ns=\([0-9]*\).*/\1/p'
}
measure() { # measure VARIANT [ATTACH-ARGUMENTS]: three loops with that program attached
    local variant=$1
    shift
    if [ $# -gt 0 ]; then
        "$work/attach" "$@" >"$work/attach.out" &
        holder=$!
        for _ in $(seq 100); do grep -q attached "$work/attach.out" && break; sleep 0.1; done
        grep -q attached "$work/attach.out" || { echo "observer_floor: $variant did not attach: $*" >&2; exit 1; }
    fi
    for _ in 1 2 3; do loop >>"$work/$variant"; done
    if [ -n "$holder" ]; then
        kill "$holder"
        wait "$holder" 2>/dev/null || true
        holder=""
    fi
}
observer=$("$build/cerberus" check | sed -n 's/^pin dir: *\([^ ]*\).*/\1/p')/observe_cerb_call_exit
variants=(none every_exit unrelated_exit openat_exit)
if [ -e "$observer" ]; then variants+=(observer); else echo "observer_floor: no $observer: its row left out" >&2; fi
# Programs others attached to sys_exit (a collector with a landlock container registered) run in every variant,
# the baseline too: the ratios understate then.
others=$(bpftool link show 2>/dev/null | grep -c "tp 'sys_exit'" || true)
[ "$others" = 0 ] || echo "observer_floor: $others sys_exit program(s) attached by others during the whole run: ratios understated" >&2
echo "observer_floor: $rounds rounds of ${#variants[@]} variants, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 0; round < rounds; round++)); do
    for ((i = 0; i < ${#variants[@]}; i++)); do
        variant=${variants[$(((i + round) % ${#variants[@]}))]}
        case "$variant" in
        none) measure none ;;
        observer) measure observer --pinned "$observer" ;;
        *) measure "$variant" "$work/empty_exits.bpf.o" "$variant" ;;
        esac
    done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fastest() { sort -n | head -1; }
base=$(median <"$work/none")
label() {
    case "$1" in
    none) echo "nothing attached" ;;
    every_exit) echo "every call's return (tp_btf/sys_exit, the call observer's)" ;;
    unrelated_exit) echo "a call the loop never makes (syscalls/sys_exit_getppid)" ;;
    openat_exit) echo "the loop's openat (syscalls/sys_exit_openat)" ;;
    observer) echo "every call's return: the call observer's own program" ;;
    esac
}
echo "| open + close, a program attached to (returning at once but the last) | CPU ns/op, median | fastest | vs nothing |"
echo "|---|---|---|---|"
for variant in "${variants[@]}"; do
    m=$(median <"$work/$variant")
    echo "| $(label "$variant") | $m | $(fastest <"$work/$variant") | $(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.3f", a / b }') |"
done
echo "observer_floor: load after $(cut -d' ' -f1-3 /proc/loadavg); sys_exit programs of others attached: $others before, $(bpftool link show 2>/dev/null | grep -c "tp 'sys_exit'" || true) after" >&2
