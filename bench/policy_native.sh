#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent policy's cost on this host, natively, under the backend `auto` picks here (the landlock
# backend where the BPF LSM is refused), all in one run so every ratio compares like with like:
#   run /bin/true with a policy vs without, and vs crun (target: policy <= 1.15x cerberus without);
#   open/connect/exec loops in a policed container vs an unpoliced one (target <= 1.10x);
#   the same loops outside any container while a policed one runs vs while none does (target <= 1.02x);
#   the loops in a policed landlock container with the collector's call observer attached vs detached
#   (`audit-collector --no-call-observer`, an option for this measurement; target <= 1.05x on open and exec);
#   creating 1,000 concurrently existing policed containers: the last ones vs the first (crun beside);
#   a burst of 100,000 denied connects: events written + counted lost must equal the denials;
#   the first policed run after the audit collector let go (--cold runs, 11 s apart) vs the steady one;
#   with --layers N, the open loop layer by layer (N rounds): in unpoliced containers given one of the
#   policy's layers each, against the plain one and the policed one.
# Called by bench/run.sh (inside its private mount namespace, where crun accepts this hybrid host).
# usage: bench/policy_native.sh BUILD_DIR [--reps N] [--scale N] [--burst N] [--cold N] [--no-crun] [--loops-only]
#                               [--layers N]
#   --no-crun      leaves out the run /bin/true rows against crun (crun needs run.sh's private mounts on a
#                  hybrid host)
#   --loops-only   only the open/connect/exec loops inside and outside containers (their rows alone)
set -euo pipefail
export LC_ALL=C.UTF-8

build=$(cd "${1:?usage: policy_native.sh BUILD_DIR [--reps N] [--scale N] [--burst N] [--cold N]}" && pwd)
shift
reps=15
scale=1000
burst=100000
cold=3
with_crun=1
loops_only=0
layer_rounds=0
while [ $# -gt 0 ]; do
    case "$1" in
    --reps) reps=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --burst) burst=$2; shift 2 ;;
    --cold) cold=$2; shift 2 ;;
    --no-crun) with_crun=0; shift ;;
    --loops-only) loops_only=1; shift ;;
    --layers) layer_rounds=$2; shift 2 ;;
    *) echo "policy_native: unknown argument $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "policy_native: must run as root" >&2; exit 1; }

work=$(mktemp -d /tmp/cerbench-policy.XXXXXX)
prefix=cerbench-policy-$$
cerberus="$build/cerberus --root $work/state --audit-dir $work/audit"
crun_cmd="crun --root $work/crun"
probe=$build/cerberus-probe
cleanup() {
    set +e
    local id
    for id in $($cerberus list -q 2>/dev/null); do $cerberus delete --force "$id" >/dev/null 2>&1; done
    for id in $($crun_cmd list -q 2>/dev/null); do $crun_cmd delete --force "$id" >/dev/null 2>&1; done
    for mount in $(awk '$3 ~ /^cgroup2?$/ { print $2 }' /proc/mounts); do
        [ -d "$mount/$prefix" ] && find "$mount/$prefix" -depth -type d -exec rmdir {} + 2>/dev/null
    done
    rm -rf "$work"
}
trap cleanup EXIT

# --- bundles ------------------------------------------------------------------------------------------
rootfs=$work/rootfs
mkdir -p "$rootfs"/{bin,dev,proc,sys,tmp,etc,workspace}
cp /bin/busybox "$rootfs/bin/busybox"
for applet in sh true sleep; do ln -s busybox "$rootfs/bin/$applet"; done
cp "$probe" "$rootfs/bin/probe"
echo data >"$rootfs/workspace/data"
(cd "$work" && runc spec && mv config.json config.base.json)
# It allows exactly what the loops do, so every rule is consulted and none denies.
policy='{"allowed_paths": ["/workspace", "/tmp", "/dev"], "read_only_paths": ["/bin", "/proc", "/etc"],
         "allowed_hosts": ["127.0.0.1/32"], "allowed_bins": ["/bin/busybox", "/bin/probe"]}'
# bundle NAME CGROUP POLICY|"" ARG...: a bundle at $work/NAME sharing the rootfs.
bundle() {
    local name=$1 cg=$2 pol=$3
    shift 3
    mkdir -p "$work/$name"
    jq --arg rootfs "$rootfs" --arg cg "/$prefix/$cg" --arg p "$pol" --argjson args "$(printf '%s\n' "$@" | jq -R . | jq -sc .)" \
        '.process.terminal = false | .root.path = $rootfs | .root.readonly = false | .process.args = $args
         | .linux.cgroupsPath = $cg | if $p == "" then . else .annotations["io.cerberus.policy"] = $p end' \
        "$work/config.base.json" >"$work/$name/config.json"
}
# Each loop runs a few hundred milliseconds or more (an open costs 0.7-3 us on the machines seen): 20,000 opens
# were over too soon for a 5% difference to stand out of the noise.
loops="probe loop-open 200000 /workspace/data; probe loop-connect 10000 127.0.0.1 9; probe loop-exec 200 /bin/true"
bundle true-plain t "" /bin/true
bundle true-policy t "$policy" /bin/true
bundle loops-plain l "" sh -c "$loops"
bundle loops-policy l "$policy" sh -c "$loops"
bundle holder h "$policy" sleep 100000
outside_loops="$probe loop-open 200000 $rootfs/workspace/data; $probe loop-connect 10000 127.0.0.1 9; $probe loop-exec 200 /bin/true"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.3f", a / b }'; }

echo "policy_native: backend: $($cerberus check | sed -n 's/^--enforcement auto picks: //p')" >&2

# --- run /bin/true ------------------------------------------------------------------------------------
runs=$([ "$loops_only" = 1 ] && echo 0 || echo "$reps")
[ "$runs" = 0 ] || echo "policy_native: run /bin/true, $runs runs each, alternating" >&2
for ((i = 0; i < runs; i++)); do
    for kind in plain policy $([ "$with_crun" = 0 ] || echo crun); do
        t0=${EPOCHREALTIME/./}
        case $kind in
        crun) $crun_cmd run --bundle "$work/true-plain" bt >/dev/null && $crun_cmd delete -f bt >/dev/null 2>&1 ;;
        *) $cerberus run --bundle "$work/true-$kind" bt >/dev/null ;;
        esac
        t1=${EPOCHREALTIME/./}
        [ "$kind" = crun ] || $cerberus delete -f bt >/dev/null 2>&1
        echo $((t1 - t0)) >>"$work/run.$kind"
    done
done

# --- the first policed run after the collector let go -------------------------------------------------
# The collector lets go 10 s after its last container (runtime/lib/audit/collector_daemon.hpp): the next
# policed create starts it again, and with it the call observer under the landlock backend.
[ "$loops_only" = 1 ] && cold=0
[ "$cold" = 0 ] || echo "policy_native: run /bin/true with a policy, the first after the audit collector exited, $cold runs" >&2
for ((i = 0; i < cold; i++)); do
    sleep 11
    t0=${EPOCHREALTIME/./}
    $cerberus run --bundle "$work/true-policy" bt >/dev/null
    t1=${EPOCHREALTIME/./}
    $cerberus delete -f bt >/dev/null 2>&1
    echo $((t1 - t0)) >>"$work/run.cold"
done

# --- loops inside and outside -------------------------------------------------------------------------
# loops_of OUT PREFIX: files PREFIX.open/.connect/.exec get the wall time per operation of each loop line in
# OUT, PREFIX.open.cpu/... its CPU time per operation.
loops_of() {
    local out=$1 prefix=$2 n=1 op line
    for op in open connect exec; do
        line=$(echo "$out" | sed -n "${n}p")
        case "$line" in
        *"failed=0 "* | *ECONNREFUSED*) ;;
        *) echo "policy_native: the $op loop ($prefix) failed: $line" >&2; exit 1 ;;
        esac
        echo "$line" | sed 's/ns_per_op=\([0-9]*\).*/\1/' >>"$work/$prefix.$op"
        echo "$line" | sed -n 's/.* cpu_per_op_ns=\([0-9]*\).*/\1/p' >>"$work/$prefix.$op.cpu"
        n=$((n + 1))
    done
}
echo "policy_native: open/connect/exec loops, $reps repetitions" >&2
for ((i = 0; i < reps; i++)); do
    loops_of "$(sh -c "$outside_loops")" outside.none
    $cerberus run --detach --bundle "$work/holder" holder >/dev/null
    loops_of "$(sh -c "$outside_loops")" outside.policed
    # Which goes first alternates: the second runs while the kernel still tears down the first's namespaces.
    order="plain policy"
    [ $((i % 2)) = 0 ] || order="policy plain"
    for kind in $order; do
        loops_of "$($cerberus run --bundle "$work/loops-$kind" li)" "inside.$kind"
        $cerberus delete -f li >/dev/null 2>&1
    done
    $cerberus delete -f holder >/dev/null 2>&1
done

# --- the open loop layer by layer -------------------------------------------------------------------------
# The open loop in unpoliced containers that each have one layer of the policy's, against the plain and the
# policed container, the order rotated every round; the holder keeps the call observer attached for all:
#   path-mount  /workspace bound on itself, as the landlock backend mounts a writable path;
#   seccomp     a filter from the spec: the policy's own judges neither open nor close, and the kernel
#               lets calls a filter always allows through without running it, so what is left is the
#               entry into seccomp, whichever calls the filter judges;
#   landlock    a ruleset the probe puts on itself, granting every file right beneath /workspace.
layers="plain path-mount seccomp landlock policy"
if [ "$layer_rounds" -gt 0 ]; then
    echo "policy_native: the open loop layer by layer, $layer_rounds rounds" >&2
    open_loop="probe loop-open 200000 /workspace/data"
    bundle layer-plain y "" $open_loop
    bundle layer-policy y "$policy" $open_loop
    bundle layer-landlock y "" probe loop-open-landlocked 200000 /workspace/data /workspace
    bundle layer-path-mount y "" $open_loop
    jq --arg source "$rootfs/workspace" \
        '.mounts += [{destination: "/workspace", type: "bind", source: $source, options: ["rbind", "rw"]}]' \
        "$work/layer-plain/config.json" >"$work/layer-path-mount/config.json"
    bundle layer-seccomp y "" $open_loop
    jq '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
                          syscalls: [{names: ["bpf", "perf_event_open", "kexec_load"], action: "SCMP_ACT_ERRNO"}]}' \
        "$work/layer-plain/config.json" >"$work/layer-seccomp/config.json"
    $cerberus run --detach --bundle "$work/holder" holder >/dev/null
    set -- $layers
    for ((i = 0; i < layer_rounds; i++)); do
        for ((k = 0; k < $#; k++)); do
            index=$(((k + i) % $# + 1))
            line=$($cerberus run --bundle "$work/layer-${!index}" ly)
            $cerberus delete -f ly >/dev/null 2>&1
            case "$line" in
            *"failed=0 "*) echo "$line" | sed -n 's/.* cpu_per_op_ns=\([0-9]*\).*/\1/p' >>"$work/layer.${!index}" ;;
            *) echo "policy_native: the open loop (${!index}) failed: $line" >&2; exit 1 ;;
            esac
        done
    done
    $cerberus delete -f holder >/dev/null 2>&1
fi

# --- the call observer's cost ----------------------------------------------------------------------------
# The loops in a policed container under a collector this script starts, with the call observer attached
# (the collector's default once a landlock container registers) or not (--no-call-observer), in turn;
# each collector is stopped once its container is deleted. The collector is host-wide (one per build
# layout): the first start waits for the one the loops above left to exit, 10 s after its last container.
# While a detached one runs, landlock containers other users of this build's layout start on the host miss
# the refusals only the observer reports: run the benchmark on a host of its own.
collector_lock=$($cerberus check | sed -n 's/^audit run dir: *\([^ ]*\).*/\1/p')/collector.lock
collector=""
# start_collector LOG [--no-call-observer]: once it listens, its pid in $collector.
start_collector() {
    local log=$1 tries
    shift
    for ((tries = 0; tries < 60; tries++)); do
        : >"$log"
        "$build/cerberus" --debug audit-collector "$@" 2>"$log" & # --debug: it logs its start and the observer's
        collector=$!
        for _ in $(seq 50); do
            grep -q "audit collector $collector started" "$log" && return 0
            kill -0 "$collector" 2>/dev/null || break # another one holds the lock
            sleep 0.1
        done
        kill "$collector" 2>/dev/null || true
        wait "$collector" 2>/dev/null || true
        sleep 1
    done
    echo "policy_native: no collector of this script's could start" >&2
    exit 1
}
stop_collector() {
    kill "$collector" 2>/dev/null || true
    wait "$collector" 2>/dev/null || true
}
[ "$runs" = 0 ] || echo "policy_native: loops with the call observer attached and detached, $runs repetitions" >&2
for ((i = 0; i < runs; i++)); do
    order="attached detached"
    [ $((i % 2)) = 0 ] || order="detached attached"
    for observer in $order; do
        start_collector "$work/collector.$observer" $([ "$observer" = attached ] || echo --no-call-observer)
        loops_of "$($cerberus run --bundle "$work/loops-policy" lo)" "observer.$observer"
        $cerberus delete -f lo >/dev/null 2>&1
        stop_collector
        attached=$(grep -c 'call observer attached' "$work/collector.$observer" || true)
        [ "$attached" = "$([ "$observer" = attached ] && echo 1 || echo 0)" ] ||
            { echo "policy_native: the call observer was not $observer: $(cat "$work/collector.$observer")" >&2; exit 1; }
    done
done

# --- 1,000 concurrently existing containers -----------------------------------------------------------
# scale_run NAME: creates $scale+5 containers one after another (not started, each its own cgroup), logs
# each create's wall time in microseconds, then deletes them.
scale_run() {
    local name=$1 i dir t0 t1 cmd pol=""
    [ "$name" = cerberus ] && cmd=$cerberus pol=$policy || cmd=$crun_cmd
    for ((i = 1; i <= scale + 5; i++)); do
        bundle "scale/$i" "s-$name-$i" "$pol" sleep 1000
        t0=${EPOCHREALTIME/./}
        $cmd create --bundle "$work/scale/$i" "s$i" >/dev/null
        t1=${EPOCHREALTIME/./}
        echo $((t1 - t0)) >>"$work/scale.$name"
    done
    for ((i = 1; i <= scale + 5; i++)); do $cmd delete --force "s$i" >/dev/null 2>&1; done
    rm -rf "$work/scale"
}
[ "$loops_only" = 0 ] || scale=0
if [ "$scale" -gt 0 ]; then
    for name in cerberus $([ "$with_crun" = 0 ] || echo crun); do
        echo "policy_native: scale, $name: $scale concurrently existing containers" >&2
        scale_run "$name"
    done
fi

# --- a burst of denied connects -----------------------------------------------------------------------
[ "$loops_only" = 0 ] || burst=0
if [ "$burst" -gt 0 ]; then
echo "policy_native: a burst of $burst denied connects" >&2
bundle burst b '{"allowed_hosts": []}' probe burst "$burst" 203.0.113.9 443
burst_out=$($cerberus run --bundle "$work/burst" burst-1)
$cerberus delete -f burst-1 >/dev/null # finishes with the collector: the trail is complete
trail=$work/audit/burst-1.jsonl
written=$(grep -c '"type":"denial"' "$trail" || true)
lost=$(grep '"type":"lost"' "$trail" | tail -n1 | jq -r '.total // 0' || true)
lost=${lost:-0}
fi

# --- the table ----------------------------------------------------------------------------------------
ms() { median <"$1" | awk '{ if ($1 == "-") print "-"; else printf "%.2f", $1 / 1000 }'; }
echo
echo "### Agent policy, natively ($(uname -r), backend $($cerberus check | sed -n 's/^--enforcement auto picks: //p'))"
echo
echo "| measurement | with policy | without | ratio | target |"
echo "|---|---|---|---|---|"
if [ "$runs" -gt 0 ]; then
    p=$(ms "$work/run.policy") n=$(ms "$work/run.plain") c=$([ "$with_crun" = 0 ] || ms "$work/run.crun")
    echo "| run /bin/true, ms (median of $reps) | $p | $n | $(ratio "$p" "$n") | <= 1.15 |"
    [ "$with_crun" = 0 ] || echo "| run /bin/true vs crun without, ms | $p | $c (crun) | $(ratio "$p" "$c") | |"
fi
[ "$cold" -gt 0 ] && echo "| run /bin/true with a policy: the first after the collector exited vs steady, ms (median of $cold) | $(ms "$work/run.cold") | $p | $(ratio "$(ms "$work/run.cold")" "$p") | |"
for op in open connect exec; do
    a=$(median <"$work/inside.policy.$op") b=$(median <"$work/inside.plain.$op")
    echo "| $op in a policed vs unpoliced container, ns/op | $a | $b | $(ratio "$a" "$b") | <= 1.10 |"
done
# The same loops' CPU time: what the policy costs an operation, without the waits for a core a shared
# host adds to the wall time above.
for op in open connect exec; do
    a=$(median <"$work/inside.policy.$op.cpu") b=$(median <"$work/inside.plain.$op.cpu")
    echo "| $op in a policed vs unpoliced container, CPU ns/op | $a | $b | $(ratio "$a" "$b") | |"
done
# Layer by layer, the fastest round of each: another task on the host only ever adds time (at a load of 10,
# half the rounds of every row took ~1.5 us more an open), and the rows differ by tens of nanoseconds.
if [ "$layer_rounds" -gt 0 ]; then
    base=$(sort -n "$work/layer.plain" | head -n1)
    for layer in $layers; do
        a=$(sort -n "$work/layer.$layer" | head -n1)
        echo "| open, layer by layer: $layer vs plain, CPU ns/op (fastest of $layer_rounds; median) |" \
            "$a ($(median <"$work/layer.$layer")) | $base | $(ratio "$a" "$base") | |"
    done
fi
for op in open connect exec; do
    [ "$runs" -gt 0 ] || break
    a=$(median <"$work/observer.attached.$op") b=$(median <"$work/observer.detached.$op")
    echo "| $op in a policed container, call observer attached vs detached, ns/op | $a | $b | $(ratio "$a" "$b") |" \
        "$([ "$op" = connect ] || echo "<= 1.05") |"
done
for op in open connect exec; do
    a=$(median <"$work/outside.policed.$op") b=$(median <"$work/outside.none.$op")
    echo "| $op outside any container, a policed one running vs none, ns/op | $a | $b | $(ratio "$a" "$b") | <= 1.02 |"
done
if [ "$scale" -gt 0 ]; then
    for name in cerberus $([ "$with_crun" = 0 ] || echo crun); do
        first=$(head -n5 "$work/scale.$name" | median | awk '{ printf "%.2f", $1 / 1000 }')
        last=$(tail -n5 "$work/scale.$name" | median | awk '{ printf "%.2f", $1 / 1000 }')
        label=$([ "$name" = cerberus ] && echo "cerberus, policed" || echo "crun, no policy")
        echo "| create with $scale others existing vs the first ($label), ms | $last | $first | $(ratio "$last" "$first") | |"
    done
fi
[ "$burst" -gt 0 ] || exit 0
echo
echo "burst: $burst denied connects ($burst_out): $written written + $lost lost = $((written + lost))" \
    "$([ $((written + lost)) -eq "$burst" ] && echo "(all accounted for)" || echo "(MISMATCH)")"
[ $((written + lost)) -eq "$burst" ]
