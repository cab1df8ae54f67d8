#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The open loop alone, under the BPF LSM programs (a benchmark, not a test; docs/benchmarks.md, "the BPF LSM
# open loop"): two idle containers, one policed (bench/vm/policy_cost.sh's policy) and one not; a probe is
# moved into one container's cgroup or the other's and runs `loop-open N /workspace/data`, the two taking
# turns, PAIRS times, with no container started between them. Then STATS_RUNS more of each with
# kernel.bpf_stats_enabled: every program's run count and run time, per open, by kind.
#   tests/vm/run.sh --cases bench/vm-open/open_pair.sh [--add FILE:/vm/open.env]   (FILE may set PAIRS,
#   OPEN_N, STATS_RUNS)
# Output: `BENCH pair.policy|pair.none WALL_NS CPU_NS` per loop, in order (pair them two by two),
# `BPFSTAT KIND PROGRAM runs=.. ns=.. runs_per_open=.. ns_per_open=..`.
# vm-timeout: 2400
# vm-boots: bpf-lsm
. /vm/lib.sh
vm_has_cerberus && vm_has_probe || exit 0
PAIRS=40
OPEN_N=4000
STATS_RUNS=5
[ -f /vm/open.env ] && . /vm/open.env
echo 0 >/proc/sys/kernel/randomize_va_space
probe=/usr/local/bin/cerberus-probe
work=/tmp/openbench
# The bench's policy (bench/vm/policy_cost.sh), plus what the probe needs to run from the VM's own tree:
# the probe is exec'd by a task already in the policed cgroup, so allowed_bins judges it.
policy='{"allowed_paths": ["/workspace", "/tmp", "/dev"],
 "read_only_paths": ["/bin", "/proc", "/etc", "/sys", "/lib", "/lib64", "/usr"], "allowed_hosts": ["127.0.0.1/32"],
 "allowed_bins": ["/bin/busybox", "/bin/cerberus-probe", "/usr/local/bin/cerberus-probe"]}'
mkdir -p /workspace && echo data >/workspace/data
make_bundle "$work/policed" /bin/sleep 100000 || exit 1
bundle_edit "$work/policed" '.annotations["io.cerberus.policy"] = $p' --arg p "$policy"
make_bundle "$work/plain" /bin/sleep 100000 || exit 1
cgroup_of() { # cgroup_of ID: the cgroup directory of the container's init
    local pid
    pid=$(cerberus state "$1" | jq -r .pid)
    echo "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/$pid/cgroup)"
}
for kind in policed plain; do
    cerberus run --detach --bundle "$work/$kind" "open-$kind" </dev/null >/dev/null 2>&1 ||
        { vm_fail "$kind holder runs"; exit 1; }
done
cg_policy=$(cgroup_of open-policed)
cg_none=$(cgroup_of open-plain)
echo "BENCH info cgroups $cg_policy $cg_none"
one() { # one KIND CGROUP: a loop in that cgroup; a BENCH pair.KIND line
    sh -c "echo \$\$ >$2/cgroup.procs && exec $probe loop-open $OPEN_N /workspace/data" 2>&1 |
        sed -n "s/.*ns_per_op=\([0-9]*\) failed=0 .*cpu_per_op_ns=\([0-9]*\).*/BENCH pair.$1 \1 \2/p;/failed=[1-9]/p"
}
stats() { # every cerb_ program: NAME RUN_CNT RUN_TIME_NS
    bpftool prog show -j | jq -r '.[] | select(.name | startswith("cerb_"))
        | "\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"' | sort
}
r=0
while [ $r -lt $PAIRS ]; do
    if [ $((r % 2)) = 0 ]; then
        one none "$cg_none"
        one policy "$cg_policy"
    else
        one policy "$cg_policy"
        one none "$cg_none"
    fi
    r=$((r + 1))
done
echo 1 >/proc/sys/kernel/bpf_stats_enabled
# Stats runs alternate too; each run's deltas are added to its kind's totals.
: >"$work/deltas"
k=0
while [ $k -lt $STATS_RUNS ]; do
    for kind in policy none; do
        cg=$cg_none
        [ $kind = policy ] && cg=$cg_policy
        stats >"$work/before"
        one $kind "$cg" | sed 's/^BENCH /STATSRUN /'
        stats >"$work/after"
        awk -v kind=$kind 'NR == FNR { c0[$1] = $2; t0[$1] = $3; next } { print kind, $1, $2 - c0[$1], $3 - t0[$1] }' \
            "$work/before" "$work/after" >>"$work/deltas"
    done
    k=$((k + 1))
done
awk -v n=$((STATS_RUNS * OPEN_N)) '{ c[$1 " " $2] += $3; t[$1 " " $2] += $4 }
    END { for (k in c) if (c[k] > 0)
        printf "BPFSTAT %s runs=%d ns=%d runs_per_open=%.2f ns_per_open=%.1f\n", k, c[k], t[k], c[k] / n, t[k] / n }' \
    "$work/deltas" | sort
echo 0 >/proc/sys/kernel/bpf_stats_enabled
cerberus delete --force open-policed >/dev/null 2>&1
cerberus delete --force open-plain >/dev/null 2>&1
vm_ok "open loops ran"
rm -rf "$work"
