#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where create time goes as containers add up, in the real-kernel lane: boots Debian's 6.1 kernel under
# qemu TCG with bench/vm-trace/scale_syscalls.sh as the case (SCALE containers of one runtime created and
# left in `created` state), then prints the create time per tenth of the creates (median, 90th percentile,
# slowest) and the syscalls whose time grew most between five early and five late creates.
# usage: bench/scale_trace.sh [--build DIR] [--runtime cerberus|crun] [--scale N] [--log FILE]
#   --build DIR    cerberus build directory (default: build; the lane needs its cerberus-probe either way)
#   --runtime R    the runtime that creates the containers (default cerberus; crun is taken from the host)
#   --scale N      containers (default 1000, at least 200)
#   --log FILE     also keep the VM's console log there
# Needs root. About 4 minutes for cerberus, 7 for crun.
set -euo pipefail
export LC_ALL=C.UTF-8

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=$repo/build
runtime=cerberus
scale=1000
log_copy=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --runtime) runtime=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --log) log_copy=$2; shift 2 ;;
    -h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale_trace.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "scale_trace.sh: must run as root" >&2; exit 1; }
[[ $scale =~ ^[1-9][0-9]*$ ]] && [ "$scale" -ge 200 ] || { echo "scale_trace.sh: --scale expects a number of at least 200" >&2; exit 2; }
case "$runtime" in cerberus | crun) ;; *) echo "scale_trace.sh: --runtime is cerberus or crun" >&2; exit 2 ;; esac

tmp=$(mktemp -d /tmp/cerberus-trace.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'RUNTIME=%s\nSCALE=%s\n' "$runtime" "$scale" >"$tmp/bench.env"
lane_args=(--build "$build" --cases "$here/vm-trace/scale_syscalls.sh" --add "$tmp/bench.env:/vm/bench.env"
    --console-log "$tmp/console.log")
if [ "$runtime" = crun ]; then
    command -v crun >/dev/null || apt-get install -y -qq crun >&2
    lane_args+=(--add "$(command -v crun)")
fi
VM_TIMEOUT=${VM_TIMEOUT:-3600} VM_MEMORY=${VM_MEMORY:-2048} "$repo/tests/vm/run.sh" "${lane_args[@]}" >&2
[ -z "$log_copy" ] || cp "$tmp/console.log" "$log_copy"
grep -aoE '^TRACE (create|sys) .*' "$tmp/console.log" >"$tmp/trace.txt" || true
[ -s "$tmp/trace.txt" ] || { echo "scale_trace.sh: no TRACE lines in the console log" >&2; exit 1; }

# Syscall names from the kernel headers, where installed (linux-libc-dev); numbers otherwise.
headers=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
: >"$tmp/names.txt"
[ -f "$headers" ] && awk '$1 == "#define" && $2 ~ /^__NR_/ { sub(/^__NR_/, "", $2); print "NAME", $3, $2 }' "$headers" >"$tmp/names.txt"

echo
echo "Create time as $scale $runtime containers add up, real-kernel lane (qemu TCG, Debian 6.1), $(date -u +%Y-%m-%d)."
awk -v scale="$scale" '
function sortn(a, n,    i, j, t) { for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t } }
function pick(a, n, q) { return a[int((n - 1) * q) + 1] }
$1 == "NAME" { name[$2] = $3; next }
$2 == "create" { tenth = int(($3 - 1) * 10 / scale); n[tenth]++; ms[tenth, n[tenth]] = $4 / 1e6; next }
$2 == "sys" {
    part = $3 < scale / 2 ? "early" : "late"; key = $4 " " $5; seen[key] = 1
    if (!((part, $3) in traced)) { traced[part, $3] = 1; creates[part]++
        if (!(part in first) || $3 < first[part]) first[part] = $3
        if ($3 > last[part]) last[part] = $3 }
    total[key, part] += $6; calls[key, part] += $7
}
END {
    printf "\n  %-16s %10s %10s %10s\n", "creates", "median ms", "p90 ms", "max ms"
    for (t = 0; t < 10; t++) {
        for (i = 1; i <= n[t]; i++) a[i] = ms[t, i]
        sortn(a, n[t]); med[t] = pick(a, n[t], 0.5)
        printf "  %-16s %10.1f %10.1f %10.1f\n", sprintf("#%d-%d", t * scale / 10 + 1, (t + 1) * scale / 10), med[t], pick(a, n[t], 0.9), a[n[t]]
    }
    printf "  last tenth / first tenth (medians): %.2f\n", med[9] / med[0]
    printf "\n  syscalls of a traced create, mean of %d early (#%d-%d) and %d late (#%d-%d), ms inside the calls\n",
        creates["early"], first["early"], last["early"], creates["late"], first["late"], last["late"]
    for (key in seen) for (p = 1; p <= 2; p++) { part = p == 1 ? "early" : "late"; if (!creates[part]) continue
        total[key, part] /= creates[part]; calls[key, part] /= creates[part] }
    printf "  %-28s %14s %14s %10s\n", "process syscall", "early (calls)", "late (calls)", "late-early"
    for (key in seen) {
        split(key, f, " "); label = f[1] " " (f[2] in name ? name[f[2]] : f[2])
        line[++lines] = sprintf("%10.2f  %-28s %7.2f (%4.0f) %7.2f (%4.0f) %10.2f", total[key, "late"] - total[key, "early"], label,
            total[key, "early"], calls[key, "early"], total[key, "late"], calls[key, "late"], total[key, "late"] - total[key, "early"])
    }
    for (i = 1; i <= lines; i++) print line[i] | "sort -g -r | head -n 15 | cut -c13-"
}' "${tmp}/names.txt" "$tmp/trace.txt" | sed 's/^\([^ ]\)/  \1/'
echo "Blocking calls (wait4, recvmsg, read on a pipe) include the time of the processes they wait for."
