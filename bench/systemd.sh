#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `run` of /bin/true with the systemd cgroup driver: cerberus, crun and runc, each with --systemd-cgroup and
# with the cgroupfs driver, measured in one boot of the systemd VM lane (systemd as init, pure cgroup v2;
# bench/vm-systemd/run_true.sh) and printed as a table of medians (min–max) and ratios from that one run.
# TCG emulation inflates absolute times: quote the ratios.
# usage: bench/systemd.sh [--build DIR] [--reps N] [--log FILE] [--from-log FILE]
#   --build DIR   cerberus build directory (default: build; built when cerberus is missing)
#   --reps N      timed runs per runtime and driver (default: the case's, 20)
#   --log FILE    also keep the VM's console log there
#   --from-log F  print the table from a console log kept with --log, without booting the VM
# Needs root (the lane makes device nodes and may install qemu and build the root image).
set -euo pipefail
export LC_ALL=C.UTF-8

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=$repo/build
reps=
log_copy=
from_log=
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --log) log_copy=$2; shift 2 ;;
    --from-log) from_log=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "systemd.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -z "$reps" ] || [[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "systemd.sh: --reps expects a positive number" >&2; exit 2; }
[ -n "$from_log" ] || [ "$(id -u)" = 0 ] || { echo "systemd.sh: must run as root" >&2; exit 1; }

tmp=$(mktemp -d /tmp/cerberus-sbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/vm_lane.sh"
lane_args=(--systemd --build "$build" --cases "$here/vm-systemd/*.sh")
if [ -n "$reps" ]; then
    echo "REPS=$reps" >"$tmp/bench.env"
    lane_args+=(--add "$tmp/bench.env:/vm/bench.env")
fi
status=0
bench_collect "$tmp/bench.txt" "$log_copy" "$from_log" "$build" "${lane_args[@]}" || status=$?
elapsed=$bench_elapsed
[ -s "$tmp/bench.txt" ] || { echo "systemd.sh: no BENCH lines in the console log" >&2; exit 1; }

echo
echo "run of /bin/true in the systemd VM lane (qemu TCG, Debian 12, systemd $(awk '$2 == "info" && $3 == "systemd" { print $4 }' "$tmp/bench.txt")," \
    "Debian 6.1 kernel), $(date -u +%Y-%m-%d), run took ${elapsed}s."
echo "Medians (min–max) in ms over the runs; c/crun and c/runc are ratios of medians. TCG inflates absolute times."
awk "$bench_awk_stats"'
function cell(m) { return count[m] ? sprintf("%.1f (%.1f-%.1f)", median(m) / 1000, lo(m) / 1000, hi(m) / 1000) : "n/a" }
function ratio(a, b) { return count[a] && count[b] ? sprintf("%.2f", median(a) / median(b)) : "n/a" }
$1 == "VMINFO" || $2 == "info" { next }
{ count[$2]++; v[$2, count[$2]] = $3 }
END {
    printf "| %-18s | %-24s | %-24s | %-24s | %-6s | %-6s |\n", "driver", "cerberus", "crun", "runc", "c/crun", "c/runc"
    printf "|%s|%s|%s|%s|%s|%s|\n", "--------------------", "--------------------------", "--------------------------",
        "--------------------------", "--------", "--------"
    split("systemd cgroupfs", drivers, " ")
    for (d = 1; d <= 2; d++) {
        k = drivers[d]
        printf "| %-18s | %-24s | %-24s | %-24s | %-6s | %-6s |\n", (k == "systemd" ? "--systemd-cgroup" : "cgroupfs"),
            cell(k ".cerberus"), cell(k ".crun"), cell(k ".runc"), ratio(k ".cerberus", k ".crun"), ratio(k ".cerberus", k ".runc")
    }
    printf "runs per cell: %d; systemd/cgroupfs for cerberus %s, crun %s, runc %s\n", count["systemd.cerberus"],
        ratio("systemd.cerberus", "cgroupfs.cerberus"), ratio("systemd.crun", "cgroupfs.crun"), ratio("systemd.runc", "cgroupfs.runc")
}' "$tmp/bench.txt"
exit "$status"
