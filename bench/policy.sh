#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The cost of the agent policy, measured in the real-kernel lane (the kernel enforcement needs Debian's kernel
# in qemu): boots the VM with bench/vm/*.sh as the cases, once with bpf in lsm= (the BPF LSM programs
# enforce) and once without (the fmod_ret programs do), reads the `BENCH` lines from the consoles and prints
# for each boot a table of medians (min–max) and ratios from that one boot. TCG emulation inflates absolute
# times; quote the ratios.
# usage: bench/policy.sh [--build DIR] [--reps N] [--scale N] [--aslr] [--boots LIST] [--log FILE]
#                        [--from-log FILE]
#   --build DIR  cerberus build directory (default: build; configured and built when cerberus is missing)
#   --reps N     repetitions of each loop measurement (default: the case's, 5)
#   --scale N    concurrently created containers with distinct policies (default: the case's, 1000; 0 skips)
#   --aslr       keep address space randomization on in the VM (off by default: under emulation it makes
#                every process's code be translated again, which a real CPU does not pay)
#   --boots LIST bpf-lsm, no-bpf-lsm or both (default: bpf-lsm,no-bpf-lsm; see tests/vm/run.sh)
#   --log FILE   also keep the VM's console log there
#   --from-log F print the table from a console log kept with --log, without booting the VM
# Needs root (the lane makes device nodes and may install qemu).
set -euo pipefail
export LC_ALL=C.UTF-8

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
build=$repo/build
overrides=()
log_copy=
from_log=
boots=bpf-lsm,no-bpf-lsm
while [ $# -gt 0 ]; do
    case "$1" in
    --build) build=$2; shift 2 ;;
    --reps) overrides+=("REPS=$2"); shift 2 ;;
    --scale) overrides+=("SCALE=$2"); shift 2 ;;
    --aslr) overrides+=("ASLR=1"); shift ;;
    --log) log_copy=$2; shift 2 ;;
    --from-log) from_log=$2; shift 2 ;;
    --boots) boots=$2; shift 2 ;;
    -h | --help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "policy.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -n "$from_log" ] || [ "$(id -u)" = 0 ] || { echo "policy.sh: must run as root" >&2; exit 1; }
for value in "${overrides[@]}"; do
    [[ ${value#*=} =~ ^[0-9]+$ ]] || { echo "policy.sh: ${value%%=*} expects a number" >&2; exit 2; }
done

tmp=$(mktemp -d /tmp/cerberus-pbench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$here/vm_lane.sh"
lane_args=(--build "$build" --cases "$here/vm/*.sh" --boots "$boots")
# crun in the VM, for the run row's other runtime (its libraries come with it).
! command -v crun >/dev/null || lane_args+=(--add "$(command -v crun):/usr/local/bin/crun")
if [ ${#overrides[@]} -gt 0 ]; then
    printf '%s\n' "${overrides[@]}" >"$tmp/bench.env"
    lane_args+=(--add "$tmp/bench.env:/vm/bench.env")
fi
status=0
# 1,000 created containers (an init, namespaces and a cgroup each) take about 750 MB.
VM_TIMEOUT=${VM_TIMEOUT:-3600} VM_MEMORY=${VM_MEMORY:-2048} \
    bench_collect "$tmp/bench.txt" "$log_copy" "$from_log" "$build" "${lane_args[@]}" || status=$?
elapsed=$bench_elapsed
[ -s "$tmp/bench.txt" ] || { echo "policy.sh: no BENCH lines in the console log" >&2; exit 1; }

echo
echo "Policy cost, real-kernel lane (qemu TCG, Debian 6.1 kernel), $(date -u +%Y-%m-%d), run took ${elapsed}s."
echo "Medians (min–max) over the repetitions; ratios of medians, each from one boot. TCG inflates absolute"
echo "times: quote the ratios."
# One file of BENCH lines per boot (a log without boot lines is the bpf-lsm boot's).
awk -v dir="$tmp" '/^VMINFO boot / { boot = $3; next } { print > (dir "/bench." (boot == "" ? "bpf-lsm" : boot) ".txt") }' \
    "$tmp/bench.txt"
for boot in bpf-lsm no-bpf-lsm; do
    [ -s "$tmp/bench.$boot.txt" ] || continue
    echo
    case $boot in
    bpf-lsm) echo "== bpf-lsm: the BPF LSM programs (bpf in lsm=)" ;;
    no-bpf-lsm) echo "== fmod-ret: the same programs as fmod_ret on security_ functions (lsm= without bpf, asked for: auto does not take them)" ;;
    esac
    awk "$bench_awk_stats"'
function cell(m, unit,    d) { d = unit == "us" ? 1000 : 1000000
    if (!count[m]) return sprintf("%-24s", "n/a")
    if (count[m] == 1) return sprintf("%-24s", sprintf("%.1f", m_(m) / d))
    return sprintf("%-24s", sprintf("%.1f (%.1f-%.1f)", median(m) / d, lo(m) / d, hi(m) / d)) }
function m_(m) { return median(m) }
function ratio(a, b) { return count[a] && count[b] && median(b) > 0 ? sprintf("%.3f", median(a) / median(b)) : "n/a" }
$2 == "info" { info[$3] = $4; next }
{ count[$2]++; v[$2, count[$2]] = $3 }
END {
    print ""
    if (info["aslr"] != "") print "Address space randomization in the VM: " (info["aslr"] == 0 ? "off" : "on (" info["aslr"] ")")
    print "Inside a container, per operation (µs)"
    printf "  %-10s %-24s %-24s %s\n", "op", "unpoliced", "policed", "policed/unpoliced"
    split("open connect exec", ops, " ")
    for (k = 1; k <= 3; k++)
        printf "  %-10s %s %s %s\n", ops[k], cell("inside.none." ops[k], "us"), cell("inside.policy." ops[k], "us"),
            ratio("inside.policy." ops[k], "inside.none." ops[k])
    print ""
    print "Outside any container, per operation (µs): programs not loaded / loaded and a policed container running / loaded, none policed"
    printf "  %-17s %-24s %-24s %-24s %-15s %s\n", "op (cgroup)", "not loaded", "policed running", "none policed", "running/unloaded", "none/unloaded"
    split("root nested", where, " ")
    for (w = 1; w <= 2; w++) for (k = 1; k <= 3; k++) {
        b = "outside.unloaded." where[w] "." ops[k]; p = "outside.policed." where[w] "." ops[k]; a = "outside.after." where[w] "." ops[k]
        printf "  %-17s %s %s %s %-16s %s\n", ops[k] " (" where[w] ")", cell(b, "us"), cell(p, "us"), cell(a, "us"), ratio(p, b), ratio(a, b)
    }
    print ""
    print "cerberus run of /bin/true, container deleted on exit (ms)"
    printf "  %-10s %-24s %-24s %-24s %-12s %s\n", "step", "no policy", "policy", "crun, no policy", "policy/none", "policy/crun"
    printf "  %-10s %s %s %s %-12s %s\n", "run", cell("run.none", "ms"), cell("run.policy", "ms"), cell("run.crun", "ms"),
        ratio("run.policy", "run.none"), ratio("run.policy", "run.crun")
    printf "  %-10s %s (a policed sleep container, detached, loading the programs first)\n", "run+load", cell("holder.run_with_load", "ms")
    if (count["burst.denials"]) {
        print ""
        printf "Burst of %d denied connects: %d written + %d lost = %d%s\n", v["burst.denials", 1], v["burst.written", 1],
            v["burst.lost", 1], v["burst.written", 1] + v["burst.lost", 1],
            v["burst.written", 1] + v["burst.lost", 1] == v["burst.denials", 1] ? " (all accounted for)" : " (MISMATCH)"
    }
    n = info["scale.created"]
    if (n == "") exit
    print ""
    printf "Scale: create of the k-th of %d concurrently existing containers with distinct policies (ms)\n", n
    split("1 10 100 500 1000", ks, " ")
    for (k = 1; k <= 5; k++) if (count["scale.create." ks[k]]) printf "  %-22s %s\n", "create #" ks[k], cell("scale.create." ks[k], "ms")
    if (n != "" && n != 1000 && n != 500 && count["scale.create." n]) printf "  %-22s %s\n", "create #" n, cell("scale.create." n, "ms")
    printf "  %-22s %s\n", "create #1-10", cell("scale.create.first10", "ms")
    printf "  %-22s %s\n", "create last 10", cell("scale.create.last10", "ms")
    printf "  %-22s %s\n", "#" n " / #1", ratio("scale.create." n, "scale.create.1")
    printf "  %-22s %s\n", "last 10 / first 10", ratio("scale.create.last10", "scale.create.first10")
    printf "  %-22s %s\n", "create first tenth", cell("scale.create.first_tenth", "ms")
    printf "  %-22s %s\n", "create last tenth", cell("scale.create.last_tenth", "ms")
    printf "  %-22s %s\n", "last/first tenth", ratio("scale.create.last_tenth", "scale.create.first_tenth")
    printf "  %-22s %s\n", "delete #1", cell("scale.delete.1", "ms")
    printf "  %-22s %s\n", "delete #" n, cell("scale.delete." n, "ms")
    printf "  %-22s %s kB (MemAvailable drop / container; %s kB left)\n", "memory", info["scale.mem_per_container_kb"], info["scale.mem_available_kb"]
}' "$tmp/bench.$boot.txt"
done
exit "$status"
